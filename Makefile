# weave: see README.md.

GO ?= go
BIN := bin
OUT := out

.PHONY: all build demo test test-short deps vet clean

all: build

build:
	$(GO) build -o $(BIN)/weave ./cmd/weave

# demo weaves mprof's producer/consumer example, runs it and prints the report.
demo: build
	@mkdir -p $(OUT)
	$(BIN)/weave cc -O2 -g -o $(OUT)/widgets testdata/widgets.c
	cd $(OUT) && WEAVE_OUT=widgets.prof ./widgets 100000
	$(BIN)/weave report $(OUT)/widgets.prof

# test runs every test, the corpus ones (c-torture, benchmarksgame) included;
# TESTFLAGS passes more flags to go test (.ci/run: -json, for its summary).
TESTFLAGS ?=
test:
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) -timeout 60m ./...

test-short:
	$(GO) test -short ./...

# deps installs what the tests use besides Go and gcc (Debian/Ubuntu, as root):
# the tools, and the libraries of the benchmarks game programs.
deps:
	apt-get update -qq
	apt-get install -y -qq valgrind clang uftrace cmake ccache libgmp-dev libpcre3-dev libpcre2-dev libapr1-dev chromium >/dev/null

# bench measures weave's overhead against the uninstrumented programs and
# peer tools (BENCHMARKS.md); BENCH_SIZE=tiny is the seconds-long smoke run
# CI does, BENCH_FLAGS passes more flags (go run ./bench -h).
BENCH_SIZE ?= full
.PHONY: bench bench-setup
bench:
	$(GO) run ./bench -size $(BENCH_SIZE) $(BENCH_FLAGS)

# bench-setup installs the peer tools bench compares against (Debian/Ubuntu, as root).
bench-setup:
	apt-get update -qq
	apt-get install -y -qq valgrind heaptrack uftrace clang >/dev/null
	apt-get install -y -qq hyperfine >/dev/null || true

clean:
	rm -rf $(BIN) $(OUT)
