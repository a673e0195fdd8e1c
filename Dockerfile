# The application image. Its base is a build argument: the official slim Python image by
# default; scripts/containers passes a Debian bookworm image of its own (Python 3.11 too) on
# machines without an image registry. Everything is installed from wheels built beforehand
# (`pip wheel --wheel-dir wheels .`): the build needs no network and no compiler, and the
# wheels are bind-mounted, never copied into a layer.
ARG BASE=python:3.11-slim
FROM ${BASE}
RUN --mount=type=bind,source=wheels,target=/wheels \
    python3 -m venv /opt/verdict \
    && /opt/verdict/bin/pip install --no-cache-dir --no-index --find-links /wheels verdict-pipeline \
    && useradd --system verdict \
    && mkdir /acl && chown verdict /acl  # the Redis ACL file the redis-acl job writes
ENV PATH=/opt/verdict/bin:$PATH PYTHONDONTWRITEBYTECODE=1
WORKDIR /app
USER verdict
