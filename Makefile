# ccbridge: make build | make quick (vet + unit tests, Go only) | make test (all tiers; what CI runs)
# | make bench | make install | make dist
GO            ?= go
CLAUDE_VERSION := 2.1.328
CLAUDE_DIR    := .cache/claude-code
CLAUDE_BIN    := $(CLAUDE_DIR)/node_modules/@anthropic-ai/claude-code-linux-x64/claude
CLAUDE_STAMP  := $(CLAUDE_DIR)/.installed-$(CLAUDE_VERSION)
CODEX_VERSION := 0.171.0
CODEX_DIR     := .cache/codex
CODEX_BIN     := $(CODEX_DIR)/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
CODEX_STAMP   := $(CODEX_DIR)/.installed-$(CODEX_VERSION)
# The e2e scenarios mostly wait on Claude and the fake model: four at a time keeps both
# cores busy without starving any of them (eight measured slower on 2 cores).
E2E_PARALLEL  ?= 4
BINS          := bin/ccbridge bin/ccbridge-hook-stop bin/ccbridge-hook-pretool

.PHONY: all build test quick unit integration e2e e2e-latest bench soak vet tools claude codex clean install dist

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ccbridge ./cmd/bridge
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ccbridge-hook-stop ./cmd/hook-stop
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ccbridge-hook-pretool ./cmd/hook-pretool

# The whole suite: unit and integration (real tmux, real git) in one race-enabled run, then the
# end-to-end tier (real binaries, real Claude Code CLI, fake model, fake Discord). The release
# archives are built first, so a change that breaks a platform's build fails here.
test: tools claude codex vet dist
	$(GO) test -race -count=1 -tags integration ./...
	$(GO) test -count=1 -tags e2e -timeout 10m -parallel $(E2E_PARALLEL) ./e2e/...

unit:
	$(GO) test -race ./...

# The quick tier: vet and the unit tests of every package, without the race detector, the
# integration tier (real tmux and git) or the e2e tier (npm, the Claude Code CLI): needs only Go.
quick:
	$(GO) vet ./...
	$(GO) test ./...

integration: tools
	$(GO) test -race -count=1 -tags integration ./...

e2e: tools claude codex
	$(GO) test -count=1 -tags e2e -timeout 10m -parallel $(E2E_PARALLEL) ./e2e/...

vet:
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GO) vet -tags e2e ./e2e/...
	$(GO) vet -tags e2e,soak ./e2e/...
	@test -z "$$(gofmt -l cmd internal e2e bench)" || { gofmt -l cmd internal e2e bench; echo "gofmt needed"; exit 1; }

# Debian packages the tiers need (command:package; chromium for the web view's browser tests); installed only when
# missing, and only where apt-get works.
TOOLS ?= tmux:tmux git:git chromium:chromium
tools:
	@for tp in $(TOOLS); do t=$${tp%%:*}; p=$${tp##*:}; \
	  command -v $$t >/dev/null 2>&1 && continue; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $$p"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$p >/dev/null; \
	  else echo "$$t is missing: install the $$p package"; exit 1; fi; \
	done

# The pinned Claude Code CLI, from npm into the ignored .cache/ (its native binary runs without the postinstall).
claude: $(CLAUDE_STAMP)

$(CLAUDE_STAMP):
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed to install Claude Code $(CLAUDE_VERSION) for the e2e tier"; exit 1; }
	rm -rf $(CLAUDE_DIR) && mkdir -p $(CLAUDE_DIR)
	cd $(CLAUDE_DIR) && npm install --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@$(CLAUDE_VERSION)
	$(CLAUDE_BIN) --version | grep -q '^$(CLAUDE_VERSION) '
	touch $@

# The pinned Codex CLI, the same way (npm pulls the native binary in as an optional dependency), for the
# e2e scenarios that run the real Codex against the fake Responses API (e2e/codex_fake_test.go).
codex: $(CODEX_STAMP)

$(CODEX_STAMP):
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed to install Codex CLI $(CODEX_VERSION) for the e2e tier"; exit 1; }
	rm -rf $(CODEX_DIR) && mkdir -p $(CODEX_DIR)
	cd $(CODEX_DIR) && npm install --no-audit --no-fund --loglevel=error @openai/codex@$(CODEX_VERSION)
	$(CODEX_BIN) --version | grep -q '^codex-cli $(CODEX_VERSION)$$'
	touch $@

# Opt-in, not part of `make test`: the e2e tier against the newest Claude Code release on npm, installed
# next to the pinned one. Tells you whether the next release still works before the pin moves.
CLAUDE_LATEST_DIR := .cache/claude-code-latest
CLAUDE_LATEST_BIN := $(CLAUDE_LATEST_DIR)/node_modules/@anthropic-ai/claude-code-linux-x64/claude

e2e-latest: tools
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed to install the latest Claude Code"; exit 1; }
	rm -rf $(CLAUDE_LATEST_DIR) && mkdir -p $(CLAUDE_LATEST_DIR)
	cd $(CLAUDE_LATEST_DIR) && npm install --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@latest
	@v=$$($(CLAUDE_LATEST_BIN) --version | cut -d' ' -f1) && echo "e2e tier against Claude Code $$v (pinned: $(CLAUDE_VERSION))" && \
	  CCBRIDGE_TEST_CLAUDE=$(CURDIR)/$(CLAUDE_LATEST_BIN) CCBRIDGE_TEST_CLAUDE_VERSION=$$v \
	  $(GO) test -count=1 -tags e2e -timeout 10m -parallel $(E2E_PARALLEL) ./e2e/...

bench: build claude
	@$(MAKE) --no-print-directory tools TOOLS="/usr/bin/time:time chromium:chromium"
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./bench/procbench -n 30 -warmup 3 -bin bin
	$(GO) test -tags e2e -run '^$$' -bench . -benchtime 1x ./e2e/

# Opt-in, not part of `make test`: the chaos soak (e2e/soak_test.go). SOAK=30m for the full run;
# SOAK_SEED=<n> replays a run's schedule. Prints one summary line and fails on any lost, doubled or
# reordered message or reply, an orphan Claude or pane, or a daemon over 64 MiB.
SOAK ?= 10m
soak: tools claude
	SOAK=$(SOAK) $(GO) test -count=1 -tags 'e2e soak' -run '^TestSoak$$' -timeout 0 -v ./e2e/

install:
	./install.sh

# Release archives: one per platform, each with the three binaries (stripped, the version
# stamped), install.sh (which installs them without Go), the README, LICENSE, docs/SECURITY.md,
# the example config and a SHA256SUMS of its files; $(DIST_DIR)/SHA256SUMS lists the archives.
VERSION        ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DIST_DIR       ?= dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST_LDFLAGS   := -s -w -X github.com/ccbridge/ccbridge/internal/daemon.version=$(VERSION)
SHA256         := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo shasum -a 256)

dist:
	@rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	@set -e; for p in $(DIST_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; name=ccbridge-$(VERSION)-$$os-$$arch; d=$(DIST_DIR)/$$name; \
	  echo "dist: $$name"; mkdir -p $$d/bin; \
	  for c in bridge:ccbridge hook-stop:ccbridge-hook-stop hook-pretool:ccbridge-hook-pretool; do \
	    CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(DIST_LDFLAGS)' -o $$d/bin/$${c#*:} ./cmd/$${c%%:*}; \
	  done; \
	  mkdir -p $$d/docs && cp README.md LICENSE config.example.toml install.sh $$d/ && cp docs/SECURITY.md $$d/docs/; \
	  (cd $$d && $(SHA256) bin/* README.md LICENSE docs/SECURITY.md config.example.toml install.sh > SHA256SUMS); \
	  tar -C $(DIST_DIR) -czf $$d.tar.gz $$name; rm -rf $$d; \
	done
	@cd $(DIST_DIR) && $(SHA256) *.tar.gz > SHA256SUMS && cat SHA256SUMS

clean:
	rm -rf bin dist
