FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY topology topology
COPY dispatcher dispatcher
COPY workers workers
COPY aggregator aggregator
COPY shared shared
COPY ops ops
RUN pip install --no-cache-dir . && useradd --system verdict \
    && mkdir /acl && chown verdict /acl  # the Redis ACL file the redis-acl job writes
USER verdict
