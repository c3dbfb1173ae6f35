#!/bin/sh
# adt_cli.sh — modules with algebraic data types through the commands: run
# (the interpreter) evaluates them; compile, tune and tasks refuse an @main
# that uses match, a constructor, a reference or a device annotation, by
# name at its FILE:LINE:COL, and take a tensor @main beside type definitions
# and ADT helpers it does not call (compiled, it matches the interpreter);
# parse warns about a match that misses a constructor.
. "$(dirname "$0")/../lib.sh"
RELAY_TUNE_CACHE="$TMP/cache"
mkdir -p "$RELAY_TUNE_CACHE"
export RELAY_TUNE_CACHE
NPYCMP="$top_builddir/tests/tools/npycmp"
cat >"$TMP/lists.relay" <<'R'
type List[A] { Cons(A, List[A]), Nil }
def @sum(%l: List[Tensor[(4), float32]]) -> Tensor[(4), float32] {
  match (%l) { Cons(%h, %t) => %h + @sum(%t), Nil => full(0f, shape=[4]) }
}
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  @sum(Cons(%x, Cons(%y, Nil)))
}
R
cat >"$TMP/pure.relay" <<'R'
type List[A] { Cons(A, List[A]), Nil }
def @length[A](%l: List[A]) -> int32 { match (%l) { Cons(_, %t) => 1 + @length(%t), Nil => 0 } }
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  %x + %y
}
R
# the interpreter runs the list version; the compiled pure version must agree with it
if "$RELAY_TUNE" run "$TMP/lists.relay" --random-params 5 --output "$TMP/lists.npy" >"$TMP/out" 2>"$TMP/err"; then
    tap_ok "run: a list of tensors summed by a recursive match"
else
    tap_fail "run: a list of tensors summed by a recursive match" "$(cat "$TMP/err")"
fi
if "$RELAY_TUNE" run "$TMP/pure.relay" --random-params 5 --target cpu --output "$TMP/pure.npy" >"$TMP/out" 2>"$TMP/err" &&
    "$NPYCMP" "$TMP/pure.npy" "$TMP/lists.npy" 1e-6 >>"$TMP/err" 2>&1; then
    tap_ok "compile: a tensor @main beside ADT code compiles and matches the interpreter's list sum"
else
    tap_fail "compile: a tensor @main beside ADT code compiles and matches the interpreter's list sum" "$(cat "$TMP/err")"
fi
# tune's road (optimize, then one task per fused kernel) takes the tensor part of such a module
cat >"$TMP/dense.relay" <<'R'
type List[A] { Cons(A, List[A]), Nil }
def @length[A](%l: List[A]) -> int32 { match (%l) { Cons(_, %t) => 1 + @length(%t), Nil => 0 } }
def @main(%x: Tensor[(1, 16), float32], %w: Tensor[(8, 16), float32]) {
  nn.relu(nn.dense(%x, %w))
}
R
if "$RELAY_TUNE" tasks "$TMP/dense.relay" >"$TMP/out" 2>"$TMP/err" && grep -q "^1 tasks, 1 calls" "$TMP/out" &&
    grep -q " dense " "$TMP/out"; then
    tap_ok "tasks: the dense task of a tensor @main beside ADT code"
else
    tap_fail "tasks: the dense task of a tensor @main beside ADT code" "$(cat "$TMP/out" "$TMP/err")"
fi
refused() { # refused NAME LINE GIST COMMAND...: exit 1, a located error naming the construct
    name=$1 line=$2 gist=$3
    shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q ":$line:[0-9]*: error: .*$gist" "$TMP/err" && grep -qF "relay-tune run --target interp" "$TMP/err"; then
        tap_ok "$name"
    else
        tap_fail "$name" "rc=$rc" "$(cat "$TMP/err")"
    fi
}
refused "compile refuses an @main that builds a list, naming the constructor" 6 "@main uses the constructor Cons" \
    "$RELAY_TUNE" compile "$TMP/lists.relay" -o "$TMP/l.so"
refused "tune refuses it before measuring anything" 6 "@main uses the constructor Cons" \
    "$RELAY_TUNE" tune "$TMP/lists.relay" --trials 1 --db "$TMP/t.db"
refused "tasks refuses it too" 6 "@main uses the constructor Cons" "$RELAY_TUNE" tasks "$TMP/lists.relay"
cat >"$TMP/dev.relay" <<'R'
def @main(%x: Tensor[(4), float32]) {
  %0 = on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True);
  nn.relu(%0)
}
R
"$RELAY_TUNE" compile "$TMP/dev.relay" -o "$TMP/d.so" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 1 ] && grep -q ":2:[0-9]*: error: @main uses on_device: device annotations" "$TMP/err"; then
    tap_ok "compile refuses on_device by name at its place"
else
    tap_fail "compile refuses on_device by name at its place" "$(cat "$TMP/err")"
fi
if "$RELAY_TUNE" run "$TMP/dev.relay" --random-params 1 >"$TMP/out" 2>"$TMP/err"; then
    tap_ok "run: on_device is an identity in the interpreter"
else
    tap_fail "run: on_device is an identity in the interpreter" "$(cat "$TMP/err")"
fi
# a non-exhaustive match is a warning: parse prints it, located, and succeeds
cat >"$TMP/partial.relay" <<'R'
type List[A] { Cons(A, List[A]), Nil }
def @head(%l: List[float32]) -> float32 {
  match (%l) { Cons(%h, _) => %h }
}
R
if "$RELAY_TUNE" parse "$TMP/partial.relay" >"$TMP/out" 2>"$TMP/err" &&
    grep -q "partial.relay:3:3: warning: match is not exhaustive: no clause matches Nil" "$TMP/err"; then
    tap_ok "parse: a non-exhaustive match warns, naming the missing constructor, and parses"
else
    tap_fail "parse: a non-exhaustive match warns, naming the missing constructor, and parses" "$(cat "$TMP/err")"
fi
tap_done
