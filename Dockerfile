# The arena server (and the compose bot): `arena serve` on port 8765, every setting
# from the environment (README, "Settings"). Pinned: the base image to the Python the
# tests run with, the dependencies to deploy/requirements.txt. Runs as an unprivileged
# user; HEALTHCHECK asks the node's /healthz.
FROM python:3.11.7-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ARENA_HOST=0.0.0.0 \
    ARENA_PORT=8765 \
    ARENA_LOG_FORMAT=json \
    ARENA_DATA_DIR=/data
WORKDIR /app
COPY deploy/requirements.txt deploy/requirements.txt
RUN pip install --no-deps -r deploy/requirements.txt
COPY pyproject.toml README.md ./
COPY engine engine
COPY protocol protocol
COPY server server
COPY clients clients
COPY deploy deploy
RUN pip install --no-deps . \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin arena \
    && mkdir -p /data && chown arena /data
USER 10001
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=4s --start-period=10s --retries=3 \
    CMD ["python", "deploy/healthcheck.py"]
CMD ["arena", "serve"]
