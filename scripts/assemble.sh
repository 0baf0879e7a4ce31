#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 2: assemble the kernel trees = pristine base + our overlay files +
# patches/series, as commits on top of the "base" tag in $TREE:
#
#   ours      everything: branch "auxlab", checked out in $TREE
#             (build/linux)
#   upstream  everything but the AUX rewrite (patches/rewrite names its
#             overlay files and series entries): branch "upstream",
#             checked out in $UTREE (build/upstream/linux), a git
#             worktree of the same repository, so the source of one
#             kernel never changes under the other's build
#
# The commits are built with a private index (git read-tree / add /
# apply --cached / commit-tree), never in a work tree; only at the end is
# each work tree moved to its new tip with "git checkout", which rewrites
# just the files whose content differs from what is checked out.
# Unchanged files keep their mtimes, so kbuild recompiles only what an
# edit really touched.
#
# Usage: assemble.sh            assemble and check out both tips
#        assemble.sh --verify   also prove each series reverses and
#                               re-applies to identical trees
#        SERIES_DIR=dir ...     take patches/series from another directory
#        REWRITE=file ...       take patches/rewrite from another file
#        ASSEMBLE_REF=refs/...  record ours there instead of
#                               refs/heads/auxlab, and leave the work trees
#                               alone (the harness self-test)
#        ASSEMBLE_UPSTREAM_REF=refs/...  with ASSEMBLE_REF: record
#                               upstream there too
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
# re-assembly with nothing changed is recognised as a no-op.  These build
# commits are never sent: the mails of make series and make fixes carry
# the sender's identity and the export time (make-series.sh).
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

idx=$BUILD/assemble.index
trap 'rm -f "$idx" "$idx.lock" "$BUILD/mailinfo".*' EXIT
export GIT_INDEX_FILE=$idx

# -- overlay and patches ---------------------------------------------------
# Two chains from the same inputs: "ours" takes every overlay file and
# every entry of patches/series; "upstream" leaves out what patches/rewrite
# names (the AUX rewrite), so it is the pristine base plus everything else
# of ours.  A shared entry that fails to apply fails both.
mapfile -t all_files < <(cd "$TOP" && git ls-files --cached --others --exclude-standard \
	-- "${OVERLAY_DIRS[@]}" | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
# patches/series lists patch files, one per line; '#' starts a comment.
mapfile -t all_series < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$SERIES_DIR/series" 2>/dev/null | grep -v '^$' || true)

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

# verify_chain: reverse every patch of "series", newest first: must give
# back base + overlay; then re-apply them all: must give the tip's tree.
# A semantic patch has no reverse: its diff (tip~k^..tip~k) stands in.
verify_chain() {
	local i c p
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
}

# chain VARIANT: build base + overlay + series for ours or upstream with
# the private index; sets tip (the result), overlay (base + overlay) and
# series (the entries applied).
chain() {
	local v=$1 f p files=() what=''
	series=()
	for f in "${all_files[@]}"; do
		[ "$v" = upstream ] && in_rewrite overlay "$f" && continue
		files+=("$f")
	done
	for p in "${all_series[@]}"; do
		[ "$v" = upstream ] && in_rewrite series "$p" && continue
		series+=("$p")
	done
	git read-tree base
	tip=$(git rev-parse "base^{commit}")
	if [ ${#files[@]} -gt 0 ]; then
		(cd "$TOP" && git --git-dir="$TREE/.git" --work-tree="$TOP" add -f -- "${files[@]}")
		[ "$v" = upstream ] && what=' (without the AUX rewrite)'
		tip=$(git commit-tree "$(git write-tree)" -p "$tip" \
			-m "auxlab: add the overlay files$what" \
			-m "Files that live only in this project, copied over the base.")
	fi
	overlay=$tip
	for p in "${series[@]}"; do
		commit_patch "$p"
	done
	info "$v: overlay ${#files[@]} files, ${#series[@]} patches applied"
	if [ $verify -eq 1 ]; then
		verify_chain
		info "$v: verify: ${#series[@]} patches apply, reverse and re-apply to identical trees"
	fi
}

# checkout_tip VARIANT DIR: move the work tree DIR to $tip.  "git checkout"
# rewrites only the files whose content differs, so unchanged files keep
# their mtimes.
checkout_tip() {
	local v=$1 dir=$2 changed
	if [ "$(git -C "$dir" rev-parse HEAD)" != "$tip" ]; then
		changed=$(git -C "$dir" diff --name-only HEAD "$tip" | wc -l)
		git -C "$dir" checkout -q -f --detach "$tip"
		info "tree[$v]: now at $(git rev-parse --short "$tip"), $changed files changed"
	else
		info "tree[$v]: unchanged at $(git rev-parse --short "$tip")"
	fi
	# A stray edit in a build tree would silently differ from what we
	# claim to have built: refuse it.
	[ -z "$(git -C "$dir" status --porcelain --untracked-files=no)" ] ||
		die "$dir has local modifications; edit the overlay or patches instead"
}

unset GIT_INDEX_FILE
# ASSEMBLE_REF / ASSEMBLE_UPSTREAM_REF (harness self-test): record the
# chains there and leave the work trees alone; upstream only if asked.
if [ -n "${ASSEMBLE_REF:-}" ]; then
	GIT_INDEX_FILE=$idx chain ours
	git update-ref "$ASSEMBLE_REF" "$tip"
	info "assembled $ASSEMBLE_REF at $(git rev-parse --short "$tip") (work tree untouched)"
	if [ -n "${ASSEMBLE_UPSTREAM_REF:-}" ]; then
		GIT_INDEX_FILE=$idx chain upstream
		git update-ref "$ASSEMBLE_UPSTREAM_REF" "$tip"
		info "assembled $ASSEMBLE_UPSTREAM_REF at $(git rev-parse --short "$tip") (work tree untouched)"
	fi
	exit 0
fi
# The work trees are kept on a detached HEAD: were HEAD the branch this
# script moves (after a hand-made "git switch auxlab"), moving the branch
# would move HEAD too, and checkout_tip would skip the checkout.
detach() { git -C "$1" symbolic-ref -q HEAD >/dev/null && git -C "$1" checkout -q --detach; return 0; }

GIT_INDEX_FILE=$idx chain ours
detach "$TREE"
git update-ref refs/heads/auxlab "$tip"
checkout_tip ours "$TREE"

GIT_INDEX_FILE=$idx chain upstream
# The upstream work tree shares $TREE's repository.  One left from an
# earlier base (build/linux extracted anew) is not a work tree of this
# repository: replace it.
if [ -e "$UTREE" ] && [ "$(git -C "$UTREE" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" != "$(git rev-parse --path-format=absolute --git-common-dir)" ]; then
	warn "$UTREE is not a work tree of $TREE; recreating it"
	rm -rf "$UTREE"
fi
git worktree prune
if [ ! -e "$UTREE" ]; then
	mkdir -p "$(dirname "$UTREE")"
	git worktree add -q --detach "$UTREE" "$tip"
	info "tree[upstream]: new work tree $UTREE at $(git rev-parse --short "$tip")"
fi
detach "$UTREE"
git update-ref refs/heads/upstream "$tip"
checkout_tip upstream "$UTREE"
