"""A minimal client for fencekeeper's JSON gateway, with Python's standard library only.

Every call is a POST of a JSON object to one route (docs/http-gateway.md); the answer is a JSON object
whose "status" is the result code (GRANTED, ACCEPTED, STALE_TOKEN, ...). Rejections are answers too:
they come back as a dict with their status, not as exceptions. Only "no node answered" raises.
"""

import base64
import json
import urllib.error
import urllib.request


class Unavailable(Exception):
    """No node of the cluster answered."""


class Gateway:
    def __init__(self, urls, timeout=10.0, context=None):
        """urls: the nodes' gateway base URLs, e.g. ["http://127.0.0.1:7601", ...]."""
        self.urls = [u.rstrip("/") for u in urls]
        self.timeout = timeout
        self.context = context  # an ssl.SSLContext with the client certificate, for a TLS cluster

    def call(self, route, body=None):
        """POSTs body to route on the first node that answers; follows a redirect to the leader."""
        payload = json.dumps(body or {}).encode()
        problems = []
        for base in self.urls:
            url = base + route
            for _ in range(3):
                request = urllib.request.Request(
                    url, data=payload, method="POST", headers={"Content-Type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=self.timeout, context=self.context) as answer:
                        return json.load(answer)
                except urllib.error.HTTPError as error:
                    if error.code == 307 and error.headers.get("Location"):
                        url = error.headers["Location"]  # NOT_LEADER: the leader's gateway
                        continue
                    return json.load(error)  # a rejection: its status says which
                except (urllib.error.URLError, OSError) as error:
                    problems.append(f"{url}: {error}")
                    break
        raise Unavailable("no node answered: " + "; ".join(problems))

    def acquire(self, resource, ttl_ms, owner="", wait_ms=0, request_id=""):
        """A waiting acquire (wait_ms > 0) needs a request id: a retry with it keeps the place in line."""
        return self.call(
            "/v1/leases/acquire",
            {"resource": resource, "ttlMs": ttl_ms, "owner": owner, "waitMs": wait_ms, "requestId": request_id},
        )

    def write(self, resource, token, key, value):
        data = base64.b64encode(value.encode()).decode()
        return self.call(
            "/v1/values/write",
            {"resource": resource, "token": token, "writes": [{"key": key, "value": data}]},
        )

    def read(self, resource, key):
        answer = self.call("/v1/values/read", {"resource": resource, "key": key})
        if "value" in answer:
            answer["text"] = base64.b64decode(answer["value"]).decode()
        return answer

    def release(self, resource, token):
        return self.call("/v1/leases/release", {"resource": resource, "token": token})

    def watch(self, resource, timeout_ms):
        """Yields lease events on resource as they commit, from now on, until timeout_ms passes."""
        # From now on: after what the node has applied (afterIndex, with every event of that entry seen).
        now = self.call("/v1/node/status")["node"]["lastAppliedIndex"]
        body = json.dumps(
            {"resource": resource, "afterIndex": now, "afterSeq": 2147483647, "timeoutMs": timeout_ms}
        ).encode()
        request = urllib.request.Request(
            self.urls[0] + "/v1/leases/watch",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=self.timeout + timeout_ms / 1000, context=self.context) as stream:
            for line in stream:  # one JSON answer per line (NDJSON)
                yield from json.loads(line).get("events", [])
