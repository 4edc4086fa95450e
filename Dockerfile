# gitfleet image: the CLI (render, validate) and, as they land, the reconciler and the agent.
# kubectl (for kustomize directories) is not bundled: mount or add one if your fleet uses
# kustomize directories; the Helm renderer is not built yet.
FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/gitfleet
COPY pyproject.toml README.md ./
COPY gitfleet ./gitfleet
COPY renderers ./renderers
COPY reconciler ./reconciler
COPY fleet-repo-template ./fleet-repo-template
COPY examples ./examples
RUN pip install --no-cache-dir -e .
RUN useradd --create-home gitfleet
USER gitfleet
WORKDIR /fleet
ENTRYPOINT ["gitfleet"]
CMD ["--help"]
