#!/usr/bin/env bash
# Fetch the real kernel libraries tiletune is measured on (test data: read by
# the analyser, never imported or installed) and unpack them under .corpus/.
# fla-core and unsloth: wheel or sdist, whichever the registry offers first.
# Idempotent: a library already unpacked is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${TILETUNE_CORPUS:-.corpus}  # tests/corpus.py reads the same variable
mkdir -p "$dest/dl"
fetch() {  # name version [pip options...]
    local name=$1 version=$2; shift 2
    local out="$dest/$name"
    [ -f "$out/.done" ] && return 0
    rm -rf "$out"; mkdir -p "$out"
    python3 -m pip download -q --no-deps "$@" -d "$dest/dl" "$name==$version"
    local file
    file=$(ls "$dest"/dl/* | grep -i "$(echo "$name" | tr '-' '_' )-$version\|$name-$version" | head -1)
    case "$file" in
        *.whl|*.zip) python3 -m zipfile -e "$file" "$out" ;;
        *.tar.gz) tar -xzf "$file" -C "$out" ;;
        *) echo "fetch_corpus: unexpected file for $name: $file" >&2; exit 1 ;;
    esac
    touch "$out/.done"
}
fetch liger-kernel 0.8.5 --only-binary=:all:
fetch torchao 0.18.0 --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any
fetch gemlite 0.6.0.post2 --no-binary=:all:
fetch fla-core 0.6.0
fetch unsloth 2026.10.9
echo "corpus in $dest: $(cd "$dest" && ls -d */ | grep -v dl | tr '\n' ' ')"
