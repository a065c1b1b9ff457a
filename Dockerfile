# A release image of rustprofile on Debian 12 (README, "Docker and Kubernetes deployment").
#
#   docker build -t rustprofile:0.2.1 .
#   docker run --rm --privileged --pid=host \
#     --mount type=bind,src=/var/run/docker.sock,dst=/var/run/docker.sock,readonly \
#     --mount type=bind,src="$PWD/profiles",dst=/profiles \
#     rustprofile:0.2.1 record --docker-container my-api --duration 10m --window 60s \
#     --output /profiles
#
# Two stages: the first builds every stage with Debian's compilers and -dev packages and
# installs them under /out as `make install` does; the second is the same Debian base with
# only what was installed and the shared libraries the stages link (found with ldd), no
# compiler and no -dev package.  BASE may name any Debian 12 image (the tests build from a
# debootstrap root imported with `docker import`, no registry needed).
ARG BASE=debian:bookworm

FROM ${BASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# What `make all` needs (scripts/install-deps.sh installs these and the test tools besides).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
	build-essential pkg-config clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev \
	libiberty-dev libcap-ng-dev libzstd-dev libdeflate-dev libcurl4-openssl-dev \
	libjansson-dev libmicrohttpd-dev libcapstone-dev libdebuginfod-dev nettle-dev \
	protobuf-c-compiler libprotobuf-c-dev libssl-dev ca-certificates >/dev/null
COPY . /src
WORKDIR /src
# vmlinux.h for the CO-RE eBPF programs comes from the build machine's BTF (docs/offcpu.md).
RUN make -j"$(nproc)" all && make install PREFIX=/usr DESTDIR=/out
# The shared libraries of every stage into /out too, each under its SONAME in the directory
# it really is in (/lib is a link to /usr/lib here: a copy must not replace it).
RUN for f in /out/usr/libexec/rustprofile/*; do \
		[ -x "$f" ] && [ ! -L "$f" ] && ldd "$f" 2>/dev/null || true; \
	done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | \
	while read -r lib; do \
		dir=$(readlink -f "$(dirname "$lib")"); mkdir -p "/out$dir"; \
		cp -L "$lib" "/out$dir/$(basename "$lib")"; \
	done && \
	mkdir -p /out/etc/ssl/certs && cp -L /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/

FROM ${BASE}
COPY --from=build /out/ /
VOLUME /profiles
ENTRYPOINT ["/usr/bin/rustprofile"]
CMD ["--help"]
