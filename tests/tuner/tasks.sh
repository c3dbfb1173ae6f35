#!/bin/sh
# tasks.sh — the golden task lists of resnet18 and resnet50 (`relay-tune
# tasks --keys`), and the resnet18 property the fusion must keep: every conv
# with its batch-norm, relu and residual add in one primitive function.
. "$(dirname "$0")/../lib.sh"
for name in resnet18 resnet50; do
    exp="$top_srcdir/tests/tuner/golden/tasks_$name.expected"
    if ! "$RELAY_TUNE" tasks --keys "$top_srcdir/benchmarks/models/$name.relay" >"$TMP/out" 2>"$TMP/err"; then
        tap_fail "tasks $name runs" "$(cat "$TMP/err")"
        continue
    fi
    [ -n "$UPDATE_GOLDEN" ] && cp "$TMP/out" "$exp"
    if diff -u "$exp" "$TMP/out" >"$TMP/diff"; then tap_ok "tasks $name match the golden list"
    else tap_fail "tasks $name match the golden list" "$(head -n 30 "$TMP/diff")"; fi
done
"$RELAY_TUNE" opt --no-types "$top_srcdir/benchmarks/models/resnet18.relay" >"$TMP/r18" 2>"$TMP/err"
convs=$(grep -c 'nn.conv2d(' "$TMP/r18")
fused=$(grep -A4 'nn.conv2d(' "$TMP/r18" | grep -c 'nn.relu(')
[ "$convs" -eq 20 ] && tap_ok "resnet18 has 20 convs" || tap_fail "resnet18 has 20 convs (found $convs)"
bad=$(awk '/= fn \(/ {inside=1; conv=0; text=""} inside {text=text $0 "\n"; if ($0 ~ /nn.conv2d\(/) conv=1}
           /^  };/ && inside { if (conv && (text !~ /multiply\(/ || text !~ /add\(/)) n++; inside=0 } END {print n+0}' "$TMP/r18")
[ "$bad" -eq 0 ] && tap_ok "resnet18: every conv function holds its batch-norm scale and shift" \
                 || tap_fail "resnet18: every conv function holds its batch-norm scale and shift ($bad do not)"
# conv, scale, shift, then the residual add and the relu, all in one function
res=$(awk '/= fn \(/ {inside=1; text=""} inside {text=text $0 "\n"}
           /^  };/ && inside { if (text ~ /nn.conv2d\(/ && text ~ /add\(%[0-9]+, %p[0-9]+\);\n *%[0-9]+ = add\(%[0-9]+, %p[0-9]+\);\n *nn.relu/) n++; inside=0 } END {print n+0}' "$TMP/r18")
[ "$res" -eq 8 ] && tap_ok "resnet18: the 8 residual adds are fused with their conv and relu" \
                 || tap_fail "resnet18: the 8 residual adds are fused with their conv and relu (found $res)"
tap_done
