#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 2: assemble the kernel tree = pristine base + our overlay files +
# patches/series, as commits on top of the "base" tag in $TREE.
#
# The commits are built with a private index (git read-tree / add /
# apply --cached / commit-tree), never in the work tree; only at the end is
# the work tree moved to the new tip with "git checkout", which rewrites just
# the files whose content differs from what is checked out.  Unchanged files
# keep their mtimes, so kbuild recompiles only what an edit really touched.
#
# Usage: assemble.sh            assemble and check out the tip
#        assemble.sh --verify   also prove the series reverses and
#                               re-applies to identical trees
#        SERIES_DIR=dir ...     take patches/series from another directory
#        ASSEMBLE_REF=refs/...  record the tip there instead of
#                               refs/heads/auxlab, and leave the work tree
#                               alone (the harness self-test uses both)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

verify=0
[ "${1:-}" = --verify ] && verify=1
SERIES_DIR=$(realpath -m "${SERIES_DIR:-$TOP/patches}")
OVERLAY_DIRS=(Documentation arch drivers include kernel lib samples tools)

cd "$TREE"
git rev-parse -q --verify refs/tags/base >/dev/null || die "no base tree; run scripts/fetch-base.sh"

export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-auxlab}
export GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-auxlab@localhost}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
# Fixed dates: identical inputs give identical commit ids, which is how a
# re-assembly with nothing changed is recognised as a no-op.
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

idx=$BUILD/assemble.index
trap 'rm -f "$idx" "$idx.lock" "$BUILD/mailinfo".*' EXIT
export GIT_INDEX_FILE=$idx
git read-tree base

# -- overlay ---------------------------------------------------------------
mapfile -t files < <(cd "$TOP" && git ls-files --cached --others --exclude-standard \
	-- "${OVERLAY_DIRS[@]}" | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
tip=$(git rev-parse "base^{commit}")
if [ ${#files[@]} -gt 0 ]; then
	(cd "$TOP" && git --git-dir="$TREE/.git" --work-tree="$TOP" add -f -- "${files[@]}")
	tip=$(git commit-tree "$(git write-tree)" -p "$tip" \
		-m "auxlab: add the overlay files" \
		-m "Files that live only in this project, copied over the base.")
fi
overlay=$tip
info "overlay: ${#files[@]} files"

# -- patches ---------------------------------------------------------------
# patches/series lists patch files, one per line; '#' starts a comment.
mapfile -t series < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$SERIES_DIR/series" 2>/dev/null | grep -v '^$' || true)
commit_patch() {
	local p=$1 path=$SERIES_DIR/$1 msg
	[ -f "$path" ] || die "patch $p is listed in series but $path does not exist"
	if ! out=$(apply_entry "$SERIES_DIR" "$p" --whitespace=nowarn 2>&1); then
		printf '%s\n' "$out" >&2
		die "patch $p does not apply (on base + overlay + the patches before it)"
	fi
	if [ "${p%.cocci}" != "$p" ]; then
		tip=$(git commit-tree "$(git write-tree)" -p "$tip" -F <(entry_message "$SERIES_DIR" "$p"))
		return
	fi
	# Take subject and body from the patch's mail headers when it has
	# them (format-patch style); otherwise name the commit after the file.
	local hdr name email
	hdr=$(git mailinfo -b "$BUILD/mailinfo.msg" "$BUILD/mailinfo.patch" <"$path")
	msg=$(sed -n 's/^Subject: //p' <<<"$hdr")
	name=$(sed -n 's/^Author: //p' <<<"$hdr")
	email=$(sed -n 's/^Email: //p' <<<"$hdr")
	[ -n "$msg" ] || msg=${p%.patch}
	tip=$(GIT_AUTHOR_NAME=${name:-$GIT_AUTHOR_NAME} GIT_AUTHOR_EMAIL=${email:-$GIT_AUTHOR_EMAIL} \
		git commit-tree "$(git write-tree)" -p "$tip" -m "$msg" -F "$BUILD/mailinfo.msg")
}
for p in "${series[@]}"; do
	commit_patch "$p"
done
info "patches: ${#series[@]} applied"

if [ $verify -eq 1 ]; then
	# Reverse every patch, newest first: must give back base + overlay.
	# A semantic patch has no reverse: its diff (tip~k^..tip~k) stands in.
	for ((i = ${#series[@]} - 1; i >= 0; i--)); do
		if [ "${series[i]%.cocci}" != "${series[i]}" ]; then
			c=$(git rev-parse "$tip~$((${#series[@]} - 1 - i))")
			git diff "$c^" "$c" | git apply --cached -R ||
				die "semantic patch ${series[i]} does not reverse cleanly"
			continue
		fi
		git apply --cached -R "$SERIES_DIR/${series[i]}" ||
			die "patch ${series[i]} does not reverse cleanly"
	done
	[ "$(git write-tree)" = "$(git rev-parse "$overlay^{tree}")" ] ||
		die "reversing the series did not restore base + overlay"
	for p in "${series[@]}"; do
		apply_entry "$SERIES_DIR" "$p" >/dev/null || die "patch $p does not re-apply"
	done
	[ "$(git write-tree)" = "$(git rev-parse "$tip^{tree}")" ] ||
		die "re-applying the series gave a different tree"
	info "verify: ${#series[@]} patches apply, reverse and re-apply to identical trees"
fi

unset GIT_INDEX_FILE
if [ -n "${ASSEMBLE_REF:-}" ]; then
	git update-ref "$ASSEMBLE_REF" "$tip"
	info "assembled $ASSEMBLE_REF at $(git rev-parse --short "$tip") (work tree untouched)"
	exit 0
fi
# The work tree is kept on a detached HEAD: were HEAD the auxlab branch
# (after a hand-made "git switch auxlab"), moving the branch would move
# HEAD too, and the check below would skip the checkout.
git symbolic-ref -q HEAD >/dev/null && git checkout -q --detach
git update-ref refs/heads/auxlab "$tip"
if [ "$(git rev-parse HEAD)" != "$tip" ]; then
	changed=$(git diff --name-only HEAD "$tip" | wc -l)
	git checkout -q -f --detach "$tip"
	info "tree: now at $(git rev-parse --short "$tip"), $changed files changed"
else
	info "tree: unchanged at $(git rev-parse --short "$tip")"
fi
# A stray edit in the build tree would silently differ from what we claim
# to have built: refuse it.
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "$TREE has local modifications; edit the overlay or patches instead"
