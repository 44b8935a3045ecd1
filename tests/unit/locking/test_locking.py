import threading

from inspector.locking.semaphore import SemaphoreLockProvider


def test_exclusive_and_cleaned_up() -> None:
    provider = SemaphoreLockProvider()
    first = provider.get_lock("n1")
    second = provider.get_lock("n1")
    other = provider.get_lock("n2")
    assert first.name == "ironic_inspector.n1"
    assert first.acquire(blocking=False)
    assert not second.acquire(blocking=False)
    assert not second.acquire(timeout=0.05)
    assert other.acquire(blocking=False)
    first.release()
    assert second.acquire(blocking=False)
    second.release()
    other.release()
    assert provider.held() == 0


def test_release_twice_is_harmless() -> None:
    lock = SemaphoreLockProvider().get_lock("n")
    lock.acquire()
    lock.release()
    lock.release()
    assert not lock.is_locked()


def test_threads_serialise() -> None:
    provider = SemaphoreLockProvider()
    inside = []
    overlap = []

    def work() -> None:
        with provider.get_lock("n"):
            inside.append(1)
            if len(inside) > 1:
                overlap.append(1)
            threading.Event().wait(0.005)
            inside.pop()

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlap == []
    assert provider.held() == 0


def test_a_lock_value_names_its_conductor_or_nobody() -> None:
    from inspector.locking.base import holder_host

    assert holder_host("c1/0f3a/9b2c") == "c1"
    assert holder_host("c1.example.com/run/token") == "c1.example.com"
    assert holder_host("9b2c0f3a") is None  # the API's, or an old conductor's
    assert holder_host("/run/token") is None
