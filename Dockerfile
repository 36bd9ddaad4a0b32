# The arena server (and the compose bot): `arena serve` on port 8765.
FROM python:3.12-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine engine
COPY protocol protocol
COPY server server
COPY clients clients
COPY deploy deploy
RUN pip install --no-cache-dir .
EXPOSE 8765
CMD ["arena", "serve", "--host", "0.0.0.0", "--port", "8765", "--log-format", "json"]
