import threading
import time

from inspector.conductor.power import PowerOnPacer


def test_spacing_between_power_ons() -> None:
    pacer = PowerOnPacer(lambda: 0.05)
    times: list[float] = []
    lock = threading.Lock()

    def go() -> None:
        pacer.wait()
        with lock:
            times.append(time.monotonic())

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times.sort()
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(gap >= 0.045 for gap in gaps), gaps


def test_zero_delay_never_sleeps() -> None:
    pacer = PowerOnPacer(lambda: 0.0)
    assert pacer.wait() == 0 and pacer.wait() == 0
