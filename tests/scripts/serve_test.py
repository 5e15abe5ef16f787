#!/usr/bin/env python3
"""`servesim serve` with real clients on the loopback interface, started by this test:
curl (streaming and not), a Python standard-library client (http.client), the Prometheus
text-format parser of prometheus_client on /metrics, bad requests, the waiting-queue limit and a
client that disconnects mid-stream or before a non-streaming answer (aborted in the engine),
SIGTERM (immediate and drain), one port per replica, a flood beyond the queue limit (429), a
replica outage and a latency spike.

The checks live in serve_harness.py (the server process and HTTP helpers), serve_api_checks.py,
serve_limit_checks.py and serve_fault_checks.py; this entry point runs them in order.

Usage: serve_test.py SERVESIM_BINARY
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_harness as harness  # noqa: E402
from serve_api_checks import (api_checks, non_streaming_disconnect_test,  # noqa: E402
                              port_per_replica_test)
from serve_fault_checks import (fail_rate_test, latency_spike_test, outage_test,  # noqa: E402
                                shutdown_tests)
from serve_limit_checks import descriptor_limit_test, flood_test, queue_limit_test  # noqa: E402


def main():
    harness.BIN = sys.argv[1]
    api_checks()
    queue_limit_test()
    shutdown_tests()
    port_per_replica_test()
    fail_rate_test()
    non_streaming_disconnect_test()
    flood_test()
    descriptor_limit_test()
    outage_test()
    latency_spike_test()

    if harness.FAILURES:
        print(f"{len(harness.FAILURES)} check(s) failed")
        return 1
    print("serve_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
