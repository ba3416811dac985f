# dynastack: one entry point for people and CI. Every target installs what it
# needs itself (npm packages from package-lock.json, Go modules on demand).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
# Go test binaries read no validation: jsii copies the environment when the
# bindings load, so it must be set before the binary starts. `make synth`
# keeps validation on.
TEST_ENV := CDK_VALIDATION=false

MODULES     := constructs lambdas infra app test
GO_PACKAGES := $(addsuffix /...,$(addprefix ./,$(MODULES)))
CDK         := node_modules/.bin/cdk
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
ACTIONLINT  := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

# make guard compares the golden files at BASE with the working tree.
BASE ?= $(shell git merge-base HEAD origin/main 2>/dev/null || git rev-parse --verify -q HEAD~1 || git rev-parse HEAD)
STAGE ?= dev

.PHONY: all deps dev admin bench deploy synth test test-go test-fuzz test-consumer test-workflows snapshots guard diff lint clean

all: test

# npm ci only when the lock file changed since the last install.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

deps: node_modules/.package-lock.json

# The local runner is built, then exec'd: make forwards SIGINT/SIGTERM to it,
# and it stops DynamoDB Local (its own process group) before exiting.
dev: deps ## synth dev, start DynamoDB Local, serve every service on 127.0.0.1:$${PORT:-8080}
	$(CDK) synth --quiet --output cdk.out 'dev/*' >/dev/null
	mkdir -p bin && cd lambdas && go build -o ../bin/local ./cmd/local
	exec bin/local -templates cdk.out/assembly-dev

# Browse the tables of a running `make dev` (its ready line names the endpoint).
admin: deps ## DYNAMO_ENDPOINT=http://127.0.0.1:<port> make admin
	@test -n "$${DYNAMO_ENDPOINT:-}" || { echo "set DYNAMO_ENDPOINT to the DynamoDB Local URL printed by make dev"; exit 2; }
	node_modules/.bin/dynamodb-admin --host 127.0.0.1 --port $${ADMIN_PORT:-8001}

# Handler vs raw SDK benchmarks against DynamoDB Local: the ratio is the
# handler's overhead. Not part of make test (timings are not assertions).
bench: deps ## make bench [BENCHTIME=300x]
	cd lambdas && go test -p 1 -run '^$$' -bench . -benchtime=$${BENCHTIME:-300x} -benchmem ./services/...

# Needs AWS credentials and a bootstrapped account; IAM or security group
# widening asks for confirmation.
deploy: deps ## make deploy STAGE=dev
	$(CDK) deploy --require-approval broadening '$(STAGE)/*'

synth: deps ## every stage through the pinned CLI, validation on, into cdk.out/
	$(CDK) synth --quiet --output cdk.out

test: deps test-go test-fuzz test-consumer test-workflows ## golden, contract, policy, construct, consumer, guard, Lambda and fuzz tests

test-go:
	$(TEST_ENV) go test -count=1 $(GO_PACKAGES)

# A short fuzzing run of what parses client input: cursors, request bodies,
# DynamoDB number ranges. Their seed corpora also run in test-go. A finding
# is written to the package's testdata/fuzz and fails the run.
FUZZ_TARGETS := platform/cursor:FuzzDecode platform/api:FuzzDecodeJSON platform/jsondoc:FuzzValidNumber
FUZZTIME     ?= 5s

test-fuzz:
	cd lambdas && for t in $(FUZZ_TARGETS); do \
		go test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime=$(FUZZTIME) ./$${t%%:*} || exit 1; \
	done

# The consumer is built outside the workspace, as another team's module would be.
test-consumer:
	cd test/consumer && GOWORK=off $(TEST_ENV) go test -count=1 ./...

test-workflows:
	go run $(ACTIONLINT) .github/workflows/*.yml

snapshots: deps ## rewrite test/snapshots from the app; review the diff before committing
	$(TEST_ENV) go test -count=1 ./test -run '^TestGolden$$' -update
	git status --short test/snapshots

guard: ## DynamoDB change hazards between the golden files at BASE and now
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	if ! git archive "$(BASE)" test/snapshots 2>/dev/null | tar -x -C "$$tmp" 2>/dev/null || [ ! -d "$$tmp/test/snapshots" ]; then \
		echo "guard: no golden files at $(BASE); nothing to compare"; exit 0; fi; \
	echo "guard: $(BASE) -> working tree"; \
	go build -o "$$tmp/ddbguard" ./infra/cmd/ddbguard && "$$tmp/ddbguard" $(GUARD_FLAGS) "$$tmp/test/snapshots" test/snapshots

# Offline: the fresh synth against the golden files. With AWS credentials:
# the real cdk diff against the deployed stage as well.
diff: deps ## make diff STAGE=dev
	@if [ -z "$${SKIP_SYNTH:-}" ]; then $(MAKE) -s synth >/dev/null; fi
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	go run ./test/cmd/snapshot -assembly cdk.out -stage "$(STAGE)" -out "$$tmp"; \
	if diff -ru test/snapshots/$(STAGE) "$$tmp/$(STAGE)"; then \
		echo "$(STAGE): synthesized templates match test/snapshots/$(STAGE)"; fi
	@if [ -n "$${AWS_ACCESS_KEY_ID:-}$${AWS_PROFILE:-}$${AWS_WEB_IDENTITY_TOKEN_FILE:-}" ]; then \
		$(CDK) diff --app cdk.out '$(STAGE)/*'; \
	else echo "(no AWS credentials: skipped cdk diff against the deployed $(STAGE) stage)"; fi

lint: ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PACKAGES)
	cd test/consumer && GOWORK=off go vet ./...
	go run $(STATICCHECK) $(GO_PACKAGES)

clean:
	rm -rf cdk.out bin
