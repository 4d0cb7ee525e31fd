#!/usr/bin/env bash
# Smoke-test the bundle that packaging/build.sh made: run it offscreen and check that it works.
#
#   packaging/smoke_test.sh [path/to/attnviz]      (default: dist/attnviz/attnviz)
#
# Checks, each reported as PASS, FAIL or SKIP:
#   files         the executable and the bundled icons are there
#   --version     prints "attnviz <version of the source tree>"
#   --list-presets lists the presets, additive-toy among them
#   gui           the window opens offscreen and is still running after GUI_SECONDS (default 15)
#   render        `attnviz render --preset additive-toy --out X.png` writes a PNG: the check that
#                 torch imports and computes inside the bundle.  Run only when this build has a
#                 render command (`attnviz render --help` shows its own usage); else SKIP.
# Exit status 0 when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."

exe="${1:-dist/attnviz/attnviz}"
gui_seconds="${GUI_SECONDS:-15}"
export QT_QPA_PLATFORM=offscreen  # no display needed
work="$(mktemp -d)"
failed=0
passed=()
skipped=()

pass() { echo "PASS  $1"; passed+=("$1"); }
fail() { echo "FAIL  $1: $2"; failed=1; }
skip() { echo "SKIP  $1: $2"; skipped+=("$1"); }

# -- files ----------------------------------------------------------------------------------
if [ ! -x "$exe" ]; then
    fail files "no executable at $exe; build it first with packaging/build.sh"
    exit 1
fi
bundle_dir="$(dirname "$exe")"
icon="$(find "$bundle_dir" -path '*resources/icons/attnviz-256.png' -print -quit)"
if [ -n "$icon" ]; then pass "files (executable, $icon)"; else fail files "resources/icons missing from the bundle"; fi

# -- --version ------------------------------------------------------------------------------
want_version="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' attnviz/__init__.py)"
got="$("$exe" --version 2>&1)"
if [ "$got" = "attnviz $want_version" ]; then pass "--version ($got)"; else fail --version "expected 'attnviz $want_version', got '$got'"; fi

# -- --list-presets -------------------------------------------------------------------------
presets="$("$exe" --list-presets 2>&1)"
if [ $? -eq 0 ] && grep -q '^additive-toy ' <<<"$presets"; then
    pass "--list-presets ($(wc -l <<<"$presets") presets)"
else
    fail --list-presets "output was: $presets"
fi

# -- gui ------------------------------------------------------------------------------------
# The app runs until closed, so "still running after GUI_SECONDS" is success; an earlier exit
# means it crashed or refused to start.  This does NOT prove a result was computed: the app shows
# compute errors in its window, not on stderr (and libtorch_cpu.so being mapped proves nothing:
# it loads before `import torch` can still fail).  The render check below is the one that does.
"$exe" --preset additive-toy >"$work/gui.log" 2>&1 &
pid=$!
sleep "$gui_seconds"
if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if grep -q 'Traceback' "$work/gui.log"; then
        fail gui "traceback in the log:"
        cat "$work/gui.log"
    else
        pass "gui (window up for ${gui_seconds} s)"
    fi
else
    wait "$pid"
    fail gui "exited early with status $?; log:"
    cat "$work/gui.log"
fi

# -- render ---------------------------------------------------------------------------------
# Older builds have no render command; argparse then prints the *main* usage for `render --help`
# and exits 0, so look for the subcommand's own usage line.
if "$exe" render --help 2>/dev/null | grep -q 'usage: attnviz render'; then
    png="$work/additive-toy.png"
    "$exe" render --preset additive-toy --out "$png" >"$work/render.log" 2>&1
    status=$?
    magic="$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')"
    if [ $status -eq 0 ] && [ "$magic" = "89504e470d0a1a0a" ] && [ "$(wc -c <"$png")" -gt 2000 ]; then
        pass "render ($png, $(wc -c <"$png") bytes)"
    else
        fail render "status $status, file magic '$magic'; log:"
        cat "$work/render.log"
    fi
else
    skip render "this build has no 'render' command"
fi

echo
echo "passed: ${passed[*]:-none}"
echo "skipped: ${skipped[*]:-none}"
if [ $failed -ne 0 ]; then echo "SMOKE TEST FAILED"; exit 1; fi
echo "smoke test OK"
