"""Support code for the demo (main.py): the local chat model and console output. Not part of the library."""
