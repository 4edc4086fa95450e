#!/usr/bin/env bash
# Build the real Kubernetes programs the tests run against -- kube-apiserver, kubectl, etcd, helm,
# kustomize, sops -- from their Go modules at pinned versions, into a cache outside the source tree.
#
# Called by .ci/run when `go` is present, and by hand:  hack/tools.sh        (build what is missing)
#                                                       hack/tools.sh --bin  (print the bin dir only)
# and by the Dockerfile's build stage for the programs the image ships:  hack/tools.sh helm kustomize sops
# (tool names: etcd helm kustomize sops kubernetes; the last is kube-apiserver + kubectl).
# Idempotent: a binary already in the cache for this tool set is reused, so a second run costs
# seconds. The tests find the binaries in GITFLEET_TOOLS_BIN, else in the default bin dir below, else
# on PATH, and skip with a one-line reason when one is missing.
#
# Overrides: GITFLEET_TOOLS_CACHE (default ~/.cache/gitfleet-tools), GITFLEET_TOOLS_BIN (default
# $GITFLEET_TOOLS_CACHE/<tool set>/bin), GO (default `go`), GITFLEET_TOOLS_NICE (default 15).
set -euo pipefail

K8S_VERSION=v1.36.3        # kube-apiserver + kubectl; its go.mod says `go 1.26.0`
STAGING_VERSION=v0.36.3    # the k8s.io/<staging module> release matching K8S_VERSION
ETCD_VERSION=v3.6.8        # the etcd server that k8s v1.36.3 itself pins in its go.mod
HELM_VERSION=v3.22.0
KUSTOMIZE_VERSION=v5.8.2   # v5.8.3 needs go 1.27
SOPS_VERSION=v3.13.3       # SOPS files encrypted with age (renderers/sops.py); its go.mod says go 1.25.8
TOOL_SET="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM_VERSION}_kustomize-${KUSTOMIZE_VERSION}"

CACHE="${GITFLEET_TOOLS_CACHE:-$HOME/.cache/gitfleet-tools}"
BIN="${GITFLEET_TOOLS_BIN:-$CACHE/$TOOL_SET/bin}"
if [ "${1:-}" = "--bin" ]; then echo "$BIN"; exit 0; fi

GO="${GO:-go}"
export GOMODCACHE="$CACHE/gomodcache" GOCACHE="$CACHE/gocache" GOPATH="$CACHE/gopath"
export GOFLAGS="-trimpath -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off
NICE="nice -n ${GITFLEET_TOOLS_NICE:-15}"
SRC="$CACHE/$TOOL_SET/src"
mkdir -p "$BIN" "$SRC"

log() { echo "hack/tools.sh: $*" >&2; }
have() { [ -x "$BIN/$1" ]; }

# A throwaway module at $SRC/$1 whose go.mod is given on stdin, plus tools.go importing $2...
make_module() {
  local dir="$SRC/$1"; shift
  mkdir -p "$dir"
  cat > "$dir/go.mod"
  { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
    for pkg in "$@"; do echo "	_ \"$pkg\""; done; echo ')'; } > "$dir/tools.go"
  (cd "$dir" && $NICE "$GO" mod tidy)
}

build_kubernetes() {
  have kube-apiserver && have kubectl && return
  log "building kube-apiserver + kubectl $K8S_VERSION"
  local gomod
  gomod="$(cd "$SRC" && "$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
    | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  { echo 'module gitfleet.invalid/tools/kubernetes'; echo; echo 'go 1.26.0'; echo
    echo "require k8s.io/kubernetes $K8S_VERSION"; echo; echo 'replace ('
    sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*$|	\1 => \1 '"$STAGING_VERSION"'|p' "$gomod"
    echo ')'; } | make_module kubernetes k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  local v="k8s.io/component-base/version" minor
  minor="$(echo "$K8S_VERSION" | cut -d. -f2)"
  local ldflags="-s -w -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor"
  ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  for cmd in kube-apiserver kubectl; do
    (cd "$SRC/kubernetes" && $NICE "$GO" build -ldflags "$ldflags" -o "$BIN/.$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd")
    mv "$BIN/.$cmd.tmp" "$BIN/$cmd"   # a killed build never leaves a binary that looks finished
  done
}

build_etcd() {
  have etcd && return
  log "building etcd $ETCD_VERSION"
  printf 'module gitfleet.invalid/tools/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" \
    | make_module etcd go.etcd.io/etcd/server/v3
  (cd "$SRC/etcd" && $NICE "$GO" build -ldflags "-s -w" -o "$BIN/.etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$BIN/.etcd.tmp" "$BIN/etcd"
}

build_helm() {
  have helm && return
  log "building helm $HELM_VERSION"
  GOBIN="$BIN" $NICE "$GO" install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

build_kustomize() {
  have kustomize && return
  log "building kustomize $KUSTOMIZE_VERSION"
  GOBIN="$BIN" $NICE "$GO" install -ldflags "-s -w" "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
}

# sops is not part of TOOL_SET (adding it would rebuild every other tool in existing caches); the
# binary is rebuilt when its recorded version differs.
build_sops() {
  if have sops && [ "$(cat "$BIN/.sops.version" 2>/dev/null)" = "$SOPS_VERSION" ]; then return; fi
  log "building sops $SOPS_VERSION"
  GOBIN="$BIN" $NICE "$GO" install -ldflags "-s -w" "github.com/getsops/sops/v3/cmd/sops@$SOPS_VERSION"
  echo "$SOPS_VERSION" > "$BIN/.sops.version"
}

TOOLS="etcd helm kustomize sops kubernetes"
for tool in "$@"; do
  case " $TOOLS " in
    *" $tool "*) ;;
    *) log "unknown tool '$tool' (known: $TOOLS)"; exit 2 ;;
  esac
done
start=$(date +%s)
for tool in ${*:-$TOOLS}; do "build_$tool"; done
log "tools ready in $BIN ($(( $(date +%s) - start )) s)"
echo "$BIN"
