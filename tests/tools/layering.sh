#!/bin/sh
# layering.sh ROOT — checks that no C file under ROOT includes a header of a
# folder its part may not use. The rule is read from the ```layers block of
# ROOT/docs/architecture.md (so the page and the check cannot drift apart):
# each line "A → B C" lets files of folder A include headers of B and C and,
# through them, of everything below them; "A → *" lets A use everything.
# Prints one line per offending #include (FILE:LINE naming both folders) and
# exits 1; exits 2 when the page has no layers or names an unknown folder;
# a folder holding C files that the layers do not name is an error too, so a
# new part cannot escape the rule by being left out of the page.
root=${1:?usage: layering.sh ROOT}
doc=$root/docs/architecture.md
[ -r "$doc" ] || { echo "layering: cannot read $doc" >&2; exit 2; }
layers=$(awk '/^```layers/ {on = 1; next} on && /^```/ {exit} on' "$doc")
[ -n "$layers" ] || { echo "layering: $doc has no \`\`\`layers block" >&2; exit 2; }

# The tracked sources when ROOT is a git work tree (build folders hold
# generated files that belong to no part), else every C file in a folder
# (the top holds only the generated config.h) but those in build folders.
cd "$root" || exit 2
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    files=$(git ls-files '*.c' '*.h')
else
    files=$(find . -mindepth 2 -name '.git' -prune -o -name 'build*' -prune -o -name '_build*' -prune -o \
        \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||')
fi

# Each #include "..." as FILE<TAB>LINE<TAB>HEADER<TAB>RESOLVED: a header
# named without a folder is the including file's neighbour, or include/'s
# (the public headers), or generated (config.h), which belongs to no part.
for f in $files; do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" /dev/null | sed -E 's/^([^:]*):([0-9]+):.*"([^"]*)".*/\1	\2	\3/'
done | while IFS='	' read -r f line h; do
    case $h in
    */*) r=$h ;;
    *) if [ -f "$(dirname "$f")/$h" ]; then r=$(dirname "$f")/$h
       elif [ -f "include/$h" ]; then r=include/$h
       else r=-
       fi ;;
    esac
    printf '%s\t%s\t%s\t%s\n' "$f" "$line" "$h" "$r"
done | awk -F'\t' -v layers="$layers" -v files="$files" '
    # the part of a path: its longest folder prefix named in the layers
    function part(path,    d) {
        d = path
        while (sub(/\/[^\/]*$/, "", d))
            if (d in known)
                return d
        return ""
    }
    function below(a, b,    i, n, k, seen, queue) {
        if (a == b || (a SUBSEP "*") in uses)
            return 1
        n = 0; queue[n++] = a; seen[a] = 1
        for (i = 0; i < n; i++)
            for (k in known)
                if (((queue[i] SUBSEP k) in uses) && !(k in seen)) {
                    if (k == b)
                        return 1
                    seen[k] = 1; queue[n++] = k
                }
        return 0
    }
    BEGIN {
        nl = split(layers, ls, "\n")
        for (i = 1; i <= nl; i++) {
            line = ls[i]
            sub(/#.*/, "", line)
            if (line !~ /[^ \t]/)
                continue
            if (split(line, lr, "→") != 2) {
                printf "layering: docs/architecture.md: cannot read the layer line \"%s\"\n", ls[i] > "/dev/stderr"
                bad = 2; continue
            }
            na = split(lr[1], left, " "); nb = split(lr[2], right, " ")
            for (a = 1; a <= na; a++) {
                known[left[a]] = 1
                for (b = 1; b <= nb; b++) {
                    uses[left[a], right[b]] = 1
                    if (right[b] != "*")
                        named[right[b]] = 1
                }
            }
        }
        for (k in named)
            if (!(k in known))
                known[k] = 1
        for (k in known)
            if (k != "*" && system("test -d \"" k "\"") != 0) {
                printf "layering: docs/architecture.md names %s/, which does not exist\n", k > "/dev/stderr"
                bad = 2
            }
        nf = split(files, fs, "\n")
        for (i = 1; i <= nf; i++)
            if (fs[i] != "" && part(fs[i]) == "") {
                d = fs[i]; sub(/\/[^\/]*$/, "", d)
                if (d == fs[i]) d = "."
                if (!(d in told))
                    printf "layering: %s/ holds C files but docs/architecture.md gives it no layer\n", d > "/dev/stderr"
                told[d] = 1; bad = 2
            }
    }
    $4 != "-" {
        a = part($1); b = part($4)
        if (a == "" || b == "" || below(a, b))
            next
        why = below(b, a) ? "which is above it" : "which it may not use"
        printf "%s:%s: %s/ includes \"%s\" of %s/, %s in docs/architecture.md'"'"'s layers\n", $1, $2, a, $3, b, why
        if (!bad) bad = 1
    }
    END { exit bad }'
