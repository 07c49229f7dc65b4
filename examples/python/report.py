"""The paused worker, from Python: worker A's lease runs out while it stalls, worker B takes over and
writes the report, and A's late write is refused (STALE_TOKEN); B's report is intact.

    python3 report.py http://127.0.0.1:7601 http://127.0.0.1:7602 http://127.0.0.1:7603
"""

import sys
import threading
import time

from fencekeeper_gateway import Gateway

RESOURCE = "python-daily-report"
DAY = "2026-11-29"


def main(urls):
    gateway = Gateway(urls)
    events = []
    watcher = threading.Thread(target=lambda: events.extend(gateway.watch(RESOURCE, timeout_ms=8000)))
    watcher.start()
    time.sleep(0.5)  # the watch is open before anything happens

    a = gateway.acquire(RESOURCE, ttl_ms=1500, owner="worker-a")
    print(f"worker-a: {a['status']} token {a['token']}")
    time.sleep(2.5)  # A stalls past its TTL: no renewals

    b = gateway.acquire(RESOURCE, ttl_ms=30000, owner="worker-b", wait_ms=5000, request_id="worker-b-1")
    print(f"worker-b: {b['status']} token {b['token']}")
    written = gateway.write(RESOURCE, b["token"], DAY, "totals by worker-b")
    print(f"worker-b writes: {written['status']} version {written['version']}")

    late = gateway.write(RESOURCE, a["token"], DAY, "totals by worker-a")
    print(f"worker-a writes: {late['status']} (current token {late['currentToken']}): {late['message']}")

    stored = gateway.read(RESOURCE, DAY)
    print(f"read: {stored['status']} {stored['text']!r} token {stored['acceptedToken']}")
    released = gateway.release(RESOURCE, b["token"])
    print(f"worker-b: {released['status']}")

    watcher.join()
    for event in events:
        print(f"event: {event['type']} token {event['token']} {event.get('owner', '')}")
    return 0 if late["status"] == "STALE_TOKEN" and stored["text"] == "totals by worker-b" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
