import threading

from tests.support.conversations import distractor_conversation, text_message


def test_concurrent_archive_and_search(make_memory):
    memory = make_memory(max_num_archived_messages=400)
    pool = distractor_conversation(200, seed=3)
    errors: list[BaseException] = []
    archived: list[list[int]] = []

    def writer(worker: int) -> None:
        try:
            for batch in range(10):
                messages = [
                    text_message(
                        "user",
                        f"w{worker} b{batch} m{i}: {pool[(worker * 37 + batch * 5 + i) % 200]['content'][0]['text']}",
                    )
                    for i in range(5)
                ]
                indices = memory.add(messages)
                archived.append(indices)
                for index, message in zip(indices, messages):
                    if index in memory.indices:
                        assert memory.get(index) == message
        except BaseException as error:  # noqa: BLE001 - surfaced below
            errors.append(error)

    def reader() -> None:
        try:
            for _ in range(30):
                for hit in memory.search("budget", top_k=5):
                    assert hit.message["content"][0]["text"].startswith("w")
                memory.retrieve("chess opening")
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)] + [
        threading.Thread(target=reader) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    every_index = sorted(i for batch in archived for i in batch)
    assert every_index == list(range(200)), "no index lost or handed out twice"
    assert len(memory) == 200
    from tests.support.archives import vector_owners

    owners, _ = vector_owners(memory)
    assert sorted(owners) == list(range(200))
