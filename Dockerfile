# One image for the hub and the agent:
#   docker run IMAGE reconcile --repo https://git.example.com/fleet.git
#   docker run IMAGE agent --repo https://git.example.com/fleet.git --cluster eu-1   (in-cluster)
# It holds every program gitfleet runs, so no feature needs a derived image:
#   git, ssh, ssh-keygen  remotes over ssh, SSH-signed commits (--sign-key, --allowed-signers)
#   gpg                   GPG keys in spec.verification / --allowed-signers
#   helm                  chart folders (`helm template`, offline)
#   kustomize             kustomization directories (`kustomize build`; kubectl is not needed)
#   sops                  SOPS-encrypted files: mount the hub's age key and pass --age-key-file
#                         (`gitfleet reconcile manifests --age-key-secret` does both); agents
#                         need only their own age key (pyrage is a Python dependency)
# helm, kustomize and sops are built from their Go modules by hack/tools.sh at the versions pinned
# there (the binaries the tests run), as static binaries. Building needs the two base images, the
# Debian archive, PyPI and the Go module proxy; nothing is downloaded at run time.
# tests/unit/test_dockerfile.py checks this file against the programs the code calls.

FROM golang:1.26-bookworm AS tools
COPY hack/tools.sh /build/tools.sh
RUN GITFLEET_TOOLS_CACHE=/build/cache GITFLEET_TOOLS_BIN=/build/bin GITFLEET_TOOLS_NICE=0 \
    /build/tools.sh helm kustomize sops

FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client gpg ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=tools /build/bin/helm /build/bin/kustomize /build/bin/sops /usr/local/bin/
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
