#!/usr/bin/env bash
# Builds the real parts the end-to-end stories run (docs/e2e.md), each from its Go module at a
# pinned version, into a cache that later runs reuse:
#   pulumi                       the Pulumi CLI and engine (github.com/pulumi/pulumi/pkg/v3)
#   pulumi-resource-kubernetes   the Kubernetes provider, at the pinned pulumi-kubernetes SDK's release
#   kube-apiserver, etcd         a real Kubernetes API server and its store (k8s.io/* at one release)
#   kube-controller-manager,     Deployments, ReplicaSets, garbage collection, namespace deletion
#   kube-scheduler               and pods placed by their GPU requests and node selectors
#   kwok                         simulated nodes and pods, and their logs, without a kubelet
# Cache: $MLCC_E2E_CACHE (default ~/.cache/mlcc-e2e): bin/ holds the binaries, one stamp each
# (its pinned version), so a second run builds nothing. Go's own caches (go env GOMODCACHE and
# GOCACHE) hold the sources and compiled packages.
set -euo pipefail

# The pins. The pulumi CLI must be at least the pulumi SDK pinned in pyproject.toml (3.272.0);
# 3.274.0 is the first pkg/v3 release at or above it that the Go module proxy serves.
PULUMI_VERSION=v3.274.0
# pulumi-kubernetes v4.27.0 (the SDK pinned in pyproject.toml). Its provider module has no tag of
# its own, and the proxy does not serve the release tag's commit (a36e06c1); it serves 867400a6,
# two days later, whose provider/ tree differs from "Prepare for v4.27.0 release" (20f0c071) only
# in its go.mod's require of the sdk module, which the wrapper sets to v4.27.0 anyway.
K8S_PROVIDER_SDK=v4.27.0
K8S_PROVIDER_MODULE_VERSION=v4.0.0-20260304044920-867400a6a208
KUBERNETES_VERSION=v1.35.4
ETCD_VERSION=v3.6.8
KWOK_VERSION=v0.8.0

CACHE=${MLCC_E2E_CACHE:-$HOME/.cache/mlcc-e2e}
BIN=$CACHE/bin
mkdir -p "$BIN" "$CACHE/wrappers"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

say() { printf '==> %s\n' "$*"; }

# Prints a line every 40 packages `go build -v` compiles, so that a 15-minute build is not silent.
progress() {
  awk -v name="$1" '{ n++; if (n % 40 == 0) { printf "    %s: %d packages compiled\n", name, n; fflush() } }
    END { printf "    %s: %d packages compiled\n", name, n }'
}

# The binary `go build` names after a package: its last path element, or the one before a
# major-version suffix (go.etcd.io/etcd/server/v3 -> server).
binary_name() {
  local name=${1##*/}
  if [[ $name =~ ^v[0-9]+$ ]]; then name=$(basename "$(dirname "$1")"); fi
  echo "$name"
}

# fresh NAME VERSION PACKAGES: every binary is there, built at VERSION.
# compile NAME ARGS...: `go build -v ARGS` with a progress line every 40 packages; its whole
# output is kept in build.log, whose end is shown when the build fails.
compile() {
  local name=$1
  shift
  if ! go build -v -trimpath -ldflags "-s -w $LDFLAGS" "$@" 2>&1 | tee build.log | progress "$name"; then
    echo "==> $name: the build failed; the end of $PWD/build.log:" >&2
    tail -n 30 build.log >&2
    exit 1
  fi
}

fresh() {
  local pkg packages
  read -ra packages <<<"$3"
  [ "$(cat "$BIN/$1.version" 2>/dev/null)" = "$2" ] && [ -x "$BIN/$1" ] || return 1
  for pkg in "${packages[@]:1}"; do [ -x "$BIN/$(binary_name "$pkg")" ] || return 1; done
}

k8s_cmd() { printf 'k8s.io/kubernetes/cmd/%s ' "$@"; }

# build NAME VERSION PACKAGES LDFLAGS MINUTES REQUIRE... [-- REPLACE...]
# Builds PACKAGES (space-separated; each binary named after its last path element, NAME for the
# first) in a wrapper module that requires the pinned releases (go install refuses a
# module with replace directives; the wrapper copies the non-local ones).
build() {
  local name=$1 version=$2 package=$3 minutes=$5
  LDFLAGS=$4
  shift 5
  if fresh "$name" "$version" "$package"; then
    say "$name $version: cached ($BIN/$name)"
    return
  fi
  say "$name $version: building (first build here: about $minutes min on 2 cores)"
  local began=$SECONDS
  local dir=$CACHE/wrappers/$name
  rm -rf "$dir" && mkdir -p "$dir"
  (
    cd "$dir"
    go mod init "mlcc.e2e/$name" >/dev/null 2>&1
    local replacing=0 args=()
    for item in "$@"; do
      if [ "$item" = -- ]; then replacing=1; continue; fi
      if [ $replacing = 1 ]; then args+=("-replace=$item"); else args+=("-require=$item"); fi
    done
    go mod edit "${args[@]}"
    local pkg packages
    read -ra packages <<<"$package"
    { printf '//go:build tools\n\npackage tools\n\nimport (\n'
      for pkg in "${packages[@]}"; do printf '\t_ "%s"\n' "$pkg"; done
      printf ')\n'; } >tools.go
    go mod tidy
    mkdir -p out
    compile "$name" -o out/ "${packages[@]}"
    mv "out/$(binary_name "${packages[0]}")" "$BIN/$name"
    for pkg in "${packages[@]:1}"; do
      mv "out/$(binary_name "$pkg")" "$BIN/$(binary_name "$pkg")"
    done
  )
  echo "$version" >"$BIN/$name.version"
  say "$name $version: built in $((SECONDS - began)) s"
}

pulumi_cli() {
  build pulumi "$PULUMI_VERSION" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
    "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" 12 \
    "github.com/pulumi/pulumi/pkg/v3@$PULUMI_VERSION" "github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION" \
    -- github.com/atotto/clipboard=github.com/tgummerer/clipboard@v0.0.0-20241001131231-d02d263e614e
}

# The provider embeds its schema with the release's version (schema-embed.json), which its own
# `go generate` step (cmd/pulumi-resource-kubernetes/generate.go) writes from the module's
# schema.json: so the provider is built in a copy of its module, as the release build does.
# The copy requires the sdk module at the release instead of its repository's ../sdk.
kubernetes_provider() {
  local name=pulumi-resource-kubernetes version=${K8S_PROVIDER_SDK#v}
  local module=github.com/pulumi/pulumi-kubernetes/provider/v4
  if fresh "$name" "$K8S_PROVIDER_SDK" ""; then
    say "$name $K8S_PROVIDER_SDK: cached ($BIN/$name)"
    return
  fi
  say "$name $K8S_PROVIDER_SDK: building (first build here: about 16 min on 2 cores)"
  local began=$SECONDS
  local dir=$CACHE/wrappers/$name src
  src=$(go mod download -json "$module@$K8S_PROVIDER_MODULE_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  rm -rf "$dir" && mkdir -p "$dir" && cp -r "$src" "$dir/provider" && chmod -R u+w "$dir"
  (
    cd "$dir/provider"
    go mod edit -dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4 \
      "-require=github.com/pulumi/pulumi-kubernetes/sdk/v4@$K8S_PROVIDER_SDK"
    go mod tidy
    (cd "cmd/$name" && VERSION=$version go run generate.go)
    LDFLAGS="-X $module/pkg/version.Version=$version"
    compile "$name" -o "$BIN/$name" "./cmd/$name"
  )
  echo "$K8S_PROVIDER_SDK" >"$BIN/$name.version"
  say "$name $K8S_PROVIDER_SDK: built in $((SECONDS - began)) s"
}

# k8s.io/kubernetes points each staging module at ./staging: the wrapper requires them at the
# release's v0 version instead, read from the release's own go.mod.
kube_apiserver() {
  local mod staging=() minor=${KUBERNETES_VERSION#v1.}
  mod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  while read -r path; do staging+=("$path@v0.$minor"); done < <(
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$mod")
  local vpkg=k8s.io/component-base/version
  build kube-apiserver "$KUBERNETES_VERSION" \
    "$(k8s_cmd kube-apiserver kube-controller-manager kube-scheduler)" \
    "-X $vpkg.gitVersion=$KUBERNETES_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=${minor%%.*}" 10 \
    "k8s.io/kubernetes@$KUBERNETES_VERSION" "${staging[@]}"
}

etcd() {
  build etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 "" 3 \
    "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "go.etcd.io/etcd/api/v3@$ETCD_VERSION" \
    "go.etcd.io/etcd/client/pkg/v3@$ETCD_VERSION" "go.etcd.io/etcd/client/v3@$ETCD_VERSION" \
    "go.etcd.io/etcd/pkg/v3@$ETCD_VERSION"
}

kwok() {
  build kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok \
    "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" 3 "sigs.k8s.io/kwok@$KWOK_VERSION"
}

started=$SECONDS
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(etcd kube_apiserver kwok kubernetes_provider pulumi_cli)
for part in "${parts[@]}"; do
  "$part"
done
say "all parts ready in $BIN ($((SECONDS - started)) s)"
