#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stage 2: assemble the kernel trees = pristine base + the commits of
# patches/series.txt (each: its overlay files, its semantic patch, its
# diff), one commit per stanza with its message, on top of the "base"
# tag in $REPO (build/linux-7.3; on 6.12 build/linux):
#
#   ours      every commit: branch "auxlab", checked out in $TREE, a
#             work tree of $REPO on a base whose row names an otree
#             (7.3: build/ours-7.3/linux), else $REPO itself
#   upstream  the commits before the series' "rewrite:" line, i.e. all
#             but the AUX rewrite: branch "upstream", checked out in
#             $UTREE (build/upstream-7.3/linux; on 6.12
#             build/upstream/linux), a git worktree of the same
#             repository, so the source of one kernel never changes
#             under the other's build
#
# The commits are built with a private index (git read-tree / add /
# apply --cached / commit-tree), never in a work tree; only at the end is
# each work tree moved to its new tip with "git checkout", which rewrites
# just the files whose content differs from what is checked out.
# Unchanged files keep their mtimes, so kbuild recompiles only what an
# edit really touched.
#
# On a base other than the default (BASE=6.12), each commit's "base 6.12:"
# block replaces its diff (scripts/series.py), and only the trees that
# base's variants need are assembled (scripts/kernels.py list trees).
#
# Usage: assemble.sh            assemble and check out both tips
#        assemble.sh --verify   also prove each chain reverses and
#                               re-applies to identical trees
#        SERIES=file ...        take another series file than
#                               patches/series.txt
#        ASSEMBLE_REF=refs/...  record ours there instead of
#                               refs/heads/auxlab, and leave the work trees
#                               alone (the harness self-test)
#        ASSEMBLE_UPSTREAM_REF=refs/...  with ASSEMBLE_REF: record
#                               upstream there too
set -euo pipefail
. "$(dirname "$0")/lib.sh"

verify=0
[ "${1:-}" = --verify ] && verify=1

cd "$REPO"
trees=" $(python3 "$TOP/scripts/kernels.py" list trees "$BASE_NAME") "
if [ -z "${ASSEMBLE_REF:-}" ]; then
	if [ "$BASE_NAME" = "$BASE_DEFAULT" ]; then
		stage "tree: ours and upstream, the base with the commits of patches/series.txt"
	else
		stage "tree-$BASE_NAME:$trees$BASE_PKG with the commits of patches/series.txt (their base $BASE_NAME: blocks)"
	fi
fi
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
mat=$BUILD/assemble.series
trap 'rm -rf "$idx" "$idx.lock" "$mat"' EXIT
export GIT_INDEX_FILE=$idx

# -- the commits ---------------------------------------------------------------
# Two chains from the same file: "ours" takes every commit of
# patches/series.txt, "upstream" those before its "rewrite:" line, so it
# is the pristine base plus everything else of ours.  A shared commit
# that fails to apply fails both.

# verify_chain: reverse every commit, newest first: its diff, then its
# overlay files; a commit with a semantic patch, which has no reverse,
# is reversed by its own diff (tip~k^..tip~k).  That must give back the
# base; then re-apply them all: must give the tip's tree.
verify_chain() {
	local i k n files
	for ((i = ${#commits[@]} - 1; i >= 0; i--)); do
		n=${commits[i]}
		k=$((${#commits[@]} - 1 - i))
		if [ -f "$mat/$n.cocci" ]; then
			git diff "$tip~$k^" "$tip~$k" | git apply --cached -R ||
				die "commit $n (semantic patch) does not reverse cleanly"
			continue
		fi
		if [ -f "$mat/$n.diff" ]; then
			git apply --cached -R "$mat/$n.diff" || die "the diff of commit $n does not reverse cleanly"
		fi
		if [ -s "$mat/$n.files" ]; then
			mapfile -t files <"$mat/$n.files"
			# -f: the private index is compared with whatever $REPO has
			# checked out, which is not what the chain built.
			git rm -q --cached -f -- "${files[@]}"
		fi
	done
	[ "$(git write-tree)" = "$(git rev-parse "base^{tree}")" ] ||
		die "reversing the commits did not restore the base"
	for n in "${commits[@]}"; do
		stage_commit "$mat" "$n" --whitespace=nowarn >/dev/null || die "commit $n does not re-apply"
	done
	[ "$(git write-tree)" = "$(git rev-parse "$tip^{tree}")" ] ||
		die "re-applying the commits gave a different tree"
}

# chain_key VARIANT: a hash of all a chain's tip depends on: the base,
# the materialized stanzas (messages, diffs, overlay lists, semantic
# patch names), the overlay files with their modes, the semantic patches
# with their macros and spatch's version, and the scripts that build it.
chain_key() {
	local f
	{
		printf '%s\n' "$1" "$(git rev-parse "base^{commit}")"
		cat "$TOP/scripts/assemble.sh" "$TOP/scripts/lib.sh"
		while IFS= read -r f; do
			printf '\n== %s %s\n' "$f" "$(stat -c %s "$mat/$f")"
			cat "$mat/$f"
		done < <(cd "$mat" && find . -type f | LC_ALL=C sort)
		while IFS= read -r f; do
			[ -n "$f" ] || continue
			printf '\n== %s %s\n' "$f" "$(stat -c '%a %s' "$TOP/$f" 2>/dev/null || echo missing)"
			cat "$TOP/$f" 2>/dev/null
		done < <(cat /dev/null "$mat"/*.files | LC_ALL=C sort -u)
		for f in "$mat"/*.cocci; do
			[ -f "$f" ] || continue
			f=$(cat "$f")
			cat "$f" "$(dirname "$f")/cocci.h"
			spatch --version 2>/dev/null | head -n1
		done
	} | sha256sum | cut -c1-40
}

# chain VARIANT: build the commits for ours or upstream with the private
# index; sets tip (the result) and commits (the stanzas applied, by
# number).  A chain built before from the same inputs (chain_key,
# recorded as refs/auxlab-memo/KEY) is taken as it was: re-assembling
# with nothing changed (make check's first step, the harness self-test)
# costs seconds, not a commit of the whole index per stanza.  --verify
# always builds.
chain() {
	local v=$1 n subj out nfiles=0 key memo
	commits=()
	if [ "$v" = upstream ]; then
		series_materialize "$mat" --upstream || die "patches/series.txt: see above"
	else
		series_materialize "$mat" || die "patches/series.txt: see above"
	fi
	key=$(chain_key "$v")
	if [ $verify -eq 0 ] && memo=$(git rev-parse -q --verify "refs/auxlab-memo/$key^{commit}"); then
		tip=$memo
		while IFS=$'\t' read -r n subj; do
			commits+=("$n")
			nfiles=$((nfiles + $(wc -l <"$mat/$n.files")))
		done <"$mat/commits"
		info "$v: ${#commits[@]} commits, with $nfiles overlay files: as assembled before ($(git rev-parse --short "$tip"))"
		return 0
	fi
	git read-tree base
	tip=$(git rev-parse "base^{commit}")
	while IFS=$'\t' read -r n subj; do
		if ! out=$(stage_commit "$mat" "$n" --whitespace=nowarn 2>&1); then
			printf '%s\n' "$out" >&2
			die "commit $n \"$subj\" of ${SERIES#"$TOP"/} does not apply (on the base + the commits before it)"
		fi
		tip=$(git commit-tree "$(git write-tree)" -p "$tip" -F "$mat/$n.msg")
		commits+=("$n")
		nfiles=$((nfiles + $(wc -l <"$mat/$n.files")))
	done <"$mat/commits"
	info "$v: ${#commits[@]} commits applied, with $nfiles overlay files"
	git update-ref "refs/auxlab-memo/$key" "$tip"
	if [ $verify -eq 1 ]; then
		verify_chain
		info "$v: verify: ${#commits[@]} commits apply, reverse and re-apply to identical trees"
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
		die "$dir has local modifications; edit the overlay files or patches/series.txt instead"
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

# The trees the variants on this base need (scripts/kernels.py list
# trees): both on the default base; on another, only those its variants
# are built from (6.12: upstream), its commits' "base NAME:" blocks.
# worktree DIR: make DIR a work tree of $REPO (detached at
# $tip) unless it is one; one left from an earlier base (build/linux-7.3
# extracted anew) is not: replace it.
worktree() {
	if [ -e "$1" ] && [ "$(git -C "$1" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" != "$(git rev-parse --path-format=absolute --git-common-dir)" ]; then
		warn "$1 is not a work tree of $REPO; recreating it"
		rm -rf "$1"
	fi
	git worktree prune
	if [ ! -e "$1" ]; then
		mkdir -p "$(dirname "$1")"
		# 90,000 files: written by as many workers as cores.
		git -c checkout.workers=0 worktree add -q --detach "$1" "$tip"
		info "tree[$2]: new work tree $1 at $(git rev-parse --short "$tip")"
	fi
}

if [[ $trees == *" ours "* ]]; then
	GIT_INDEX_FILE=$idx chain ours
	# Ours in $REPO itself, or in a work tree of its own (see REPO in
	# lib.sh).
	[ "$TREE" = "$REPO" ] || worktree "$TREE" ours
	detach "$TREE"
	git update-ref refs/heads/auxlab "$tip"
	checkout_tip ours "$TREE"
else
	info "ours: not built on base $BASE_NAME (scripts/kernels.py)"
fi
[[ $trees == *" upstream "* ]] || exit 0

GIT_INDEX_FILE=$idx chain upstream
# The upstream work tree shares $REPO.
worktree "$UTREE" upstream
detach "$UTREE"
git update-ref refs/heads/upstream "$tip"
checkout_tip upstream "$UTREE"
