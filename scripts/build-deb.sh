#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make deb: the Debian package of xfib, built with the distribution's
# tools (dpkg-buildpackage, debhelper) and checked with lintian.
#
# The packaging lives in scripts/debian/ (the top level of the repository
# is fixed). This copies the sources and scripts/debian/ into
# $BUILD/deb/xfib-VERSION/debian, writes debian/changelog for VERSION,
# builds the binary package there (unsigned) and runs lintian on the
# result; lintian's output goes to $BUILD/deb/lintian.txt too, and an
# error from it fails the build. The package is copied to $BUILD/.
#
# Environment: BUILD (build), DEB_VERSION (0.1.N, N the commit count, or
# 0.1.0 outside git), DEBFULLNAME and DEBEMAIL (the maintainer; default
# the author of the last commit).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
out="$BUILD/deb"

for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null ||
		{ echo "build-deb: $t missing (scripts/install-deps.sh)" >&2; exit 1; }
done
in_git() { git -C "$top" rev-parse --git-dir >/dev/null 2>&1; }
if [ -z "${DEB_VERSION:-}" ]; then
	DEB_VERSION=0.1.0
	in_git && DEB_VERSION="0.1.$(git -C "$top" rev-list --count HEAD)"
fi
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then
	maint="$DEBFULLNAME <$DEBEMAIL>"
elif in_git; then
	maint=$(git -C "$top" log -1 --format='%an <%ae>')
else
	maint="xfib maintainers <xfib@example.org>"
fi

src="$out/xfib-$DEB_VERSION"
rm -rf "$out"
mkdir -p "$src"
# The sources the build and the package need; not the tests, not build/.
cp -a "$top"/{bpf,ctl,include,man,scripts,Makefile,LICENSE,README.md} "$src/"
rm -rf "$src/scripts/debian"
cp -a "$top/scripts/debian" "$src/debian"
sed -i "s|@MAINTAINER@|$maint|" "$src/debian/control"
cat >"$src/debian/changelog" <<EOT
xfib ($DEB_VERSION) unstable; urgency=medium

  * Snapshot of xfib$(in_git && echo " at commit $(git -C "$top" rev-parse --short HEAD)").

 -- $maint  $(date -R)
EOT

# In a clean environment: the package's own make must not see this
# build's variables (BUILD, a parent make's MAKEFLAGS: its clean step
# would remove that directory).
(cd "$src" && env -i PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 \
	dpkg-buildpackage -b -us -uc --jobs=auto) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
}
changes=$(ls "$out"/xfib_"$DEB_VERSION"_*.changes)
deb=$(ls "$out"/xfib_"$DEB_VERSION"_*.deb)
# Lintian's findings, information included; errors fail the build. Not
# as root (lintian advises against it): as nobody, when run as root.
as_user=()
[ "$(id -u)" -ne 0 ] || as_user=(runuser -u nobody -- env HOME=/nonexistent)
rc=0
"${as_user[@]}" lintian --display-info --fail-on error "$changes" >"$out/lintian.txt" 2>&1 || rc=$?
cat "$out/lintian.txt"
if [ "$rc" -ne 0 ]; then
	echo "build-deb: lintian reports errors (exit $rc)" >&2
	exit 1
fi
cp "$deb" "$BUILD/"
echo "build-deb: $BUILD/$(basename "$deb") (lintian: $(grep -c . "$out/lintian.txt" || true) lines, no errors)"
