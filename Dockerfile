# One image for the hub and the agent:
#   docker run IMAGE reconcile --repo https://git.example.com/fleet.git
#   docker run IMAGE agent --repo https://git.example.com/fleet.git --cluster eu-1   (in-cluster)
# kubectl (for kustomize folders in the fleet) is not bundled: add it in a derived image if your
# fleet uses kustomize directories. sops (for a hub that decrypts SOPS-encrypted Secrets) is not
# bundled either: add it the same way and mount the hub's age key (--age-key-file); agents need
# nothing more than their own age key file (pyrage is a dependency). The Helm renderer is not built yet.
FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/gitfleet
COPY pyproject.toml README.md ./
COPY gitfleet ./gitfleet
COPY renderers ./renderers
COPY reconciler ./reconciler
COPY fleet-repo-template ./fleet-repo-template
COPY examples ./examples
RUN pip install --no-cache-dir -e '.[agent]'
RUN useradd --create-home --uid 10001 gitfleet
USER 10001
ENV XDG_CACHE_HOME=/home/gitfleet/.cache
WORKDIR /home/gitfleet
ENTRYPOINT ["gitfleet"]
CMD ["--help"]
