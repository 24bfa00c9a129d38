"""A local stand-in for the ``bedrock-runtime`` InvokeModel endpoint, on 127.0.0.1.

It speaks the documented request and response bodies of each supported model, records every request, and can
answer with throttling or server errors first, so tests exercise botocore's real serialization, signing and
retry handling. Its vectors are deterministic functions of the text (not a model), unnormalized on purpose.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import numpy as np


def fake_vector(text: str, dimension: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dimension) * 3.0).astype(float).tolist()


class BedrockStandIn:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next: list[tuple[int, str]] = []  # (HTTP status, error type) answered before succeeding
        self.lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                model_id = unquote(self.path.split("/model/", 1)[1].rsplit("/invoke", 1)[0])
                with stand_in.lock:
                    stand_in.requests.append(
                        {"model_id": model_id, "body": body, "auth": self.headers.get("Authorization", "")}
                    )
                    failure = stand_in.fail_next.pop(0) if stand_in.fail_next else None
                if failure:
                    status, error_type = failure
                    self.send_response(status)
                    self.send_header("x-amzn-ErrorType", error_type)
                    self.send_header("Content-Type", "application/json")
                    payload = json.dumps({"message": f"{error_type} from the stand-in"}).encode()
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                payload = json.dumps(stand_in.respond(model_id, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def respond(self, model_id: str, body: dict) -> dict:
        if model_id == "amazon.titan-embed-text-v1":
            return {"embedding": fake_vector(body["inputText"], 1536), "inputTextTokenCount": 5}
        if model_id == "amazon.titan-embed-text-v2:0":
            dimension = body.get("dimensions", 1024)
            vector = fake_vector(body["inputText"], dimension)
            return {"embedding": vector, "inputTextTokenCount": 5, "embeddingsByType": {"float": vector}}
        if model_id.startswith("cohere.embed"):
            vectors = [fake_vector(f"{body['input_type']}|{t}", 1024) for t in body["texts"]]
            if body.get("embedding_types"):
                return {
                    "id": "x",
                    "response_type": "embeddings_by_type",
                    "texts": body["texts"],
                    "embeddings": {"float": vectors},
                }
            return {"id": "x", "response_type": "embeddings_floats", "texts": body["texts"], "embeddings": vectors}
        raise AssertionError(f"unexpected model {model_id}")

    def __enter__(self) -> BedrockStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
