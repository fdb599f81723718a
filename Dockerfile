# The built-in evaluators as a service (assay serve-evaluators --builtin), code sandbox included.
#
#   podman build -t assay-evaluators .
#   podman run --rm -p 8766:8766 -e ASSAY_SERVICE_TOKEN=<a long secret> \
#       --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#       --cap-add SYS_ADMIN --cap-add NET_ADMIN assay-evaluators
#
# It binds 0.0.0.0 inside the container, so it refuses to start without a token.
# The code sandbox: bubblewrap (level 3) needs to create namespaces, which the default
# seccomp profile and capability set of Docker/podman forbid; the options above allow it
# (keep the default bridge network: never --network host with NET_ADMIN).
# Without them the sandbox falls back to the strongest backend that works (unshare, then
# rlimit: a dedicated uid and resource limits, no namespaces) and every code result says
# which one ran in metadata["sandbox"]. Set ASSAY_SANDBOX_MIN_LEVEL to refuse weaker ones.
# See docs/service.md.
#
# BASE: any Debian bookworm image (the default, or one built locally: docs/service.md).
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${BASE}

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv bubblewrap util-linux nodejs ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# The dependencies first, in a layer keyed by pyproject.toml alone (an empty package stands
# in for src/, an empty README for the real one): a change to src/ or the README rebuilds
# only the next layer, assay itself, in seconds.
# That layer also holds the build backend (pyproject's build-system) and checks the
# dependencies (pip check: the stand-in declares what assay declares), so the next layer
# neither downloads nor checks anything.
# Behind a TLS-intercepting proxy, hand pip its CA bundle as a build secret:
#   podman build --secret id=pip_cert,src=/etc/ssl/certs/ca-certificates.crt ...
COPY pyproject.toml /build/assay/
RUN --mount=type=secret,id=pip_cert \
    if [ -s /run/secrets/pip_cert ]; then export PIP_CERT=/run/secrets/pip_cert; fi \
    && python3 -m venv /opt/assay \
    && mkdir -p /build/assay/src/assay \
    && touch /build/assay/README.md /build/assay/src/assay/__init__.py /build/assay/src/assay_pytest.py \
    && /opt/assay/bin/pip install --no-cache-dir '/build/assay[service,code,sql,text]' \
        $(python3 -c "import tomllib; print(*tomllib.load(open('/build/assay/pyproject.toml', 'rb'))['build-system']['requires'])") \
    && /opt/assay/bin/pip check \
    && /opt/assay/bin/pip uninstall -y -q assay \
    && rm -rf /build
COPY pyproject.toml README.md /build/assay/
COPY src /build/assay/src
RUN /opt/assay/bin/pip install --no-cache-dir --no-deps --no-build-isolation /build/assay \
    && rm -rf /build

ENV PATH=/opt/assay/bin:$PATH PYTHONDONTWRITEBYTECODE=1
WORKDIR /srv
EXPOSE 8766
HEALTHCHECK --interval=30s --timeout=5s CMD python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8766/health', timeout=4)"
CMD ["assay", "serve-evaluators", "--builtin", "--host", "0.0.0.0", "--port", "8766"]
