#!/usr/bin/env bash
# On a bare GPU host (Ubuntu 24.04: no sshd, no ssh-keygen, no network), makes the SSH
# benchmarks runnable: unpacks Debian 12's OpenSSH packages, carried in DIR (downloaded on the
# build machine with `apt-get download openssh-server openssh-client openssh-sftp-server libwrap0
# libnsl2 libtirpc3 libtirpc-common libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
# libcom-err2 libkeyutils1`), into /opt/deb, outside the system's own directories, and puts small
# wrappers at /usr/sbin/sshd, /usr/bin/ssh-keygen and /usr/bin/ssh that run them with their
# libraries. sshd re-executes itself by the absolute path it was started with, which is the
# unpacked binary's, so the wrapper is passed once.
# When DIR also holds tmux's packages (`apt-get download tmux libevent-core-2.1-7 libutempter0`)
# and the host has no tmux, a wrapper at /usr/bin/tmux runs it the same way (the attached
# console's benchmark drives `gpufleet attach` in tmux).
# Usage (from the repository root): tools/device-sshd.sh [DIR]   (default carry/debs)
set -euo pipefail
DIR=${1:-carry/debs}
ls "$DIR"/openssh-server_*.deb >/dev/null
mkdir -p /opt/deb /run/sshd
for f in "$DIR"/*.deb; do dpkg -x "$f" /opt/deb; done
LIBS=/opt/deb/lib/x86_64-linux-gnu:/opt/deb/usr/lib/x86_64-linux-gnu
for tool in usr/sbin/sshd usr/bin/ssh-keygen usr/bin/ssh; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec /opt/deb/%s "$@"\n' "$LIBS" "$tool" >"/$tool"
  chmod 755 "/$tool"
done
if ls "$DIR"/tmux_*.deb >/dev/null 2>&1 && ! command -v tmux >/dev/null; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec /opt/deb/usr/bin/tmux "$@"\n' "$LIBS" >/usr/bin/tmux
  chmod 755 /usr/bin/tmux
fi
# sshd's privilege-separation user, which the package's install script would have made.
id sshd >/dev/null 2>&1 || useradd --system --home-dir /run/sshd --shell /usr/sbin/nologin sshd
/usr/sbin/sshd -V 2>&1 | head -1
