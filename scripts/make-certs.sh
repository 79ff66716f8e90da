#!/usr/bin/env bash
# Certificates for the manager's tls+tcp:// control socket.
#
#   scripts/make-certs.sh DIR NAME...
#
# Makes, once, a private CA in DIR (ca.pem, ca.key: EC P-256, 10 years,
# CN "Sluice CA"), then for each NAME a key and a certificate signed by it
# (DIR/NAME.key, DIR/NAME.pem: CN=NAME, SAN DNS:NAME, usable by a server
# and a client, 825 days). The manager's NAME is "sluice-manager" (the name
# members and sluicectl check, their server_name / --server-name); give
# every mux, agent and operator a NAME of its own:
#
#   scripts/make-certs.sh /etc/sluice/pki sluice-manager mux1 host1 ops
#
# Run it again to add names: what exists is kept (a pair half there, or a
# certificate the CA in DIR did not sign, is an error, never overwritten).
# With ca.key kept offline (ca.pem alone in DIR), a run checks and keeps
# what exists, and stops at the first NAME it would have to sign.
# Keys are mode 0600. Files appear whole or not at all. See docs/cli.md.
set -euo pipefail

. "$(dirname "$0")/script-args.sh"

if [[ $# -ge 1 && ($1 == -h || $1 == --help) ]]; then
	script_help
fi
if [[ $# -lt 2 ]]; then
	script_usage "$0 DIR NAME..."
fi

dir=$1
shift
for name in "$@"; do
	# The name becomes a file name, a CN and a DNS SAN: keep it to DNS characters.
	if [[ ! $name =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,62})$ || $name == ca ]]; then
		echo "make-certs: $name: not a usable name (letters, digits, '.', '-'; not \"ca\")" >&2
		exit 2
	fi
done

command -v openssl >/dev/null || {
	echo "make-certs: openssl not found (apt-get install openssl)" >&2
	exit 1
}

mkdir -p "$dir"
work=$(mktemp -d "$dir/.make-certs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A pair is there whole, absent whole, or the run stops.
have_pair() { # base
	if [[ -e $1.pem && -e $1.key ]]; then
		return 0
	fi
	if [[ -e $1.pem || -e $1.key ]]; then
		echo "make-certs: only one of $1.pem and $1.key exists: remove it to remake the pair" >&2
		exit 1
	fi
	return 1
}

new_key() { # path
	(umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 \
		-pkeyopt ec_param_enc:named_curve -out "$1" 2>"$work/err") || {
		cat "$work/err" >&2
		exit 1
	}
	chmod 0600 "$1"
}

serial() {
	echo "0x$(openssl rand -hex 16)"
}

# The CA: ca.pem alone is its key kept offline; ca.key alone is a mistake
# to mend (never a reason for a new CA, which no certificate chains to).
ca_key=yes
if [[ -e $dir/ca.pem && ! -e $dir/ca.key ]]; then
	ca_key=
	echo "kept $dir/ca.pem (its key is not in $dir: only certificates that exist are checked)"
elif [[ -e $dir/ca.key && ! -e $dir/ca.pem ]]; then
	echo "make-certs: $dir/ca.key is there without $dir/ca.pem: put the CA's certificate back" >&2
	exit 1
elif have_pair "$dir/ca"; then
	echo "kept $dir/ca.pem"
else
	new_key "$work/ca.key"
	openssl req -new -x509 -key "$work/ca.key" -out "$work/ca.pem" -days 3650 -sha256 \
		-set_serial "$(serial)" -subj "/CN=Sluice CA" \
		-addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-addext "subjectKeyIdentifier=hash"
	mv "$work/ca.key" "$dir/ca.key"
	mv "$work/ca.pem" "$dir/ca.pem"
	echo "made $dir/ca.pem (keep $dir/ca.key offline once every certificate is made)"
fi

for name in "$@"; do
	base=$dir/$name
	if have_pair "$base"; then
		if ! openssl verify -CAfile "$dir/ca.pem" "$base.pem" >"$work/err" 2>&1; then
			cat "$work/err" >&2
			echo "make-certs: $base.pem is not signed by $dir/ca.pem: remove $base.pem and $base.key to remake them" >&2
			exit 1
		fi
		echo "kept $base.pem"
		continue
	fi
	if [[ -z $ca_key ]]; then
		echo "make-certs: $name: signing needs $dir/ca.key, which is not there (kept offline?): bring it back for this run" >&2
		exit 1
	fi
	new_key "$work/$name.key"
	openssl req -new -key "$work/$name.key" -out "$work/$name.csr" -subj "/CN=$name"
	cat >"$work/$name.ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:$name
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
	openssl x509 -req -in "$work/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
		-set_serial "$(serial)" -days 825 -sha256 -extfile "$work/$name.ext" \
		-out "$work/$name.pem" 2>"$work/err" || {
		cat "$work/err" >&2
		exit 1
	}
	mv "$work/$name.key" "$base.key"
	mv "$work/$name.pem" "$base.pem"
	echo "made $base.pem"
done
