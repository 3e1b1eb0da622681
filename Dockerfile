# Felt services image (one image, every service): `docker build -t felt .`
# Run one service: `docker run --rm -p 50051:50051 -p 9101:9101 felt evaluator --port 50051 --metrics-port 9101`
# The manifests in deploy/k8s run it read-only, as uid 10001, with FELT_DATA_DIR on an emptyDir.

FROM python:3.11-slim AS build
# A C compiler for the evaluator's extension (handeval._core); it stays in this stage only.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY deploy/docker/build-venv.sh deploy/docker/build-venv.sh
COPY requirements.lock ./
RUN sh deploy/docker/build-venv.sh deps /opt/felt /src
COPY pyproject.toml setup.py ./
COPY protos protos
COPY libs libs
COPY services services
RUN sh deploy/docker/build-venv.sh app /opt/felt /src \
    && /opt/felt/bin/python -c "import handeval._core, services.evaluator.server"

FROM python:3.11-slim
RUN groupadd --gid 10001 felt \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin felt \
    && mkdir -p /var/lib/felt \
    && chown 10001:10001 /var/lib/felt
COPY --from=build /opt/felt /opt/felt
ENV PATH=/opt/felt/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    FELT_HOST=0.0.0.0 \
    FELT_DATA_DIR=/var/lib/felt
# Numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd.
USER 10001:10001
WORKDIR /var/lib/felt
EXPOSE 50051 50052 50053 50054 50055 9101 9102 9103 9104 9105
ENTRYPOINT ["felt", "serve"]
CMD ["evaluator"]
