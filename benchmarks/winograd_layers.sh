#!/bin/sh
# winograd_layers.sh [TARGET] [THREADS] — resnet18's four 3x3 stride-1
# layers (conv + bias + relu, padding 1) as the direct conv and as the
# Winograd conv at F(4x4) and F(2x2), each under its default schedule for
# TARGET (default "cpu"), timed alone by benchmarks/time_kernel.c: the
# fastest call of three runs of 60, ms (docs/winograd.md). Run from the
# build tree: ./benchmarks/winograd_layers.sh "cpu -isa=avx2" 1
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
tg=${1:-cpu} threads=${2:-1}
RT=${RELAY_TUNE:-./relay-tune}
flags=$("$RT" targets "$tg" | sed -n 's/^  cflags: //p' | sed 's/ -fPIC -shared//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "target '$tg', OMP_NUM_THREADS=$threads: fastest call, ms"
echo "layer              direct   F(4x4)   F(2x2)"
for spec in 64:56 128:28 256:14 512:7; do
    c=${spec%:*} h=${spec#*:}
    cat >"$tmp/m.relay" <<EOF2
#[version = "0.0.5"]
def @main(%x: Tensor[(1, $c, $h, $h), float32], %w: Tensor[($c, $c, 3, 3), float32], %b: Tensor[($c), float32]) {
  nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], channels=$c, kernel_size=[3, 3]), %b))
}
EOF2
    x=$((c * h * h)) w=$((c * c * 9))
    line=$(printf "%-18s" "${c}x${h}x${h}")
    for v in direct 4 2; do
        if [ $v = direct ]; then opt="--winograd off" sizes="$x $w $c $w $x"
        else opt="--winograd all --winograd-tile $v" sizes="$x $((c * c * (v + 2) * (v + 2))) $c $x"; fi
        "$RT" lower "$tmp/m.relay" $opt --target "$tg" --random-params 0 --task 0 --emit c >"$tmp/k.c"
        k=$(sed -n 's/^int \(kernel_[0-9a-f]*\)(void \*const \*args)$/\1/p' "$tmp/k.c" | tail -n 1)
        cc $flags -DKERNEL="$k" "$top/benchmarks/time_kernel.c" "$tmp/k.c" -o "$tmp/k" -lm
        best=
        for r in 1 2 3; do
            ms=$(OMP_NUM_THREADS=$threads "$tmp/k" 60 $sizes | awk '{ print $2 }')
            best=$(echo "$ms ${best:-$ms}" | awk '{ print ($1 < $2) ? $1 : $2 }')
        done
        line="$line $(printf "%8s" "$best")"
    done
    echo "$line"
done
