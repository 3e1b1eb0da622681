"""The OTLP exporter (issue 22): a service started with OTEL_EXPORTER_OTLP_ENDPOINT sends its spans over
OTLP/gRPC to that collector, named after the service, and sends what it still holds when it stops. The
collector here is a real gRPC server speaking OTLP's TraceService (the stubs opentelemetry-proto ships)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as otlp
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as otlp_grpc
from poker.evaluator.v1 import evaluator_service_pb2 as epb
from poker.evaluator.v1 import evaluator_service_pb2_grpc as epb_grpc
from servicekit.testing import free_port, public_channel, session_ca_dir

ROOT = Path(__file__).resolve().parents[2]


class Collector(otlp_grpc.TraceServiceServicer):  # type: ignore[misc]
    def __init__(self) -> None:
        self.requests: list[otlp.ExportTraceServiceRequest] = []
        self.lock = threading.Lock()

    def Export(
        self, request: otlp.ExportTraceServiceRequest, context: Any
    ) -> otlp.ExportTraceServiceResponse:
        with self.lock:
            self.requests.append(request)
        return otlp.ExportTraceServiceResponse()

    def spans(self) -> list[tuple[str, str]]:
        """(service.name, span name) of every span received."""
        with self.lock:
            found = []
            for request in self.requests:
                for resource_spans in request.resource_spans:
                    attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                    for scope in resource_spans.scope_spans:
                        found += [(attributes.get("service.name", ""), s.name) for s in scope.spans]
            return found


def test_a_service_exports_its_spans_to_the_configured_collector(tmp_path: Path) -> None:
    collector = Collector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    otlp_grpc.add_TraceServiceServicer_to_server(collector, server)
    collector_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "OTEL_"))},
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector_port}",
        "FELT_DATA_DIR": str(tmp_path),
        "FELT_TLS_DEV_CA_DIR": str(session_ca_dir()),  # its certificate from the session's CA
    }
    argv = [sys.executable, "-m", "felt", "serve", "evaluator", "--port", str(port), "--metrics-port", "0"]
    with (tmp_path / "evaluator.out").open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        with public_channel(f"127.0.0.1:{port}", timeout=None) as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
            stub = epb_grpc.EvaluatorServiceStub(channel)
            stub.Evaluate(
                epb.EvaluateRequest(
                    rule=epb.HAND_RULE_HOLDEM, hole_cards=["As", "Ks"], board=["Qs", "Js", "Ts"]
                ),
                timeout=10,
            )
        proc.send_signal(signal.SIGTERM)  # the drain sends the spans still buffered
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        server.stop(0)
    deadline = time.monotonic() + 10
    while not collector.spans() and time.monotonic() < deadline:
        time.sleep(0.05)
    spans = collector.spans()
    assert ("felt-evaluator", "/poker.evaluator.v1.EvaluatorService/Evaluate") in spans, spans
    assert not any("grpc.health" in name for _, name in spans)  # probes are never traced
