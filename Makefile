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

.PHONY: all deps synth test test-go test-consumer snapshots lint clean

all: test

# npm ci only when the lock file changed since the last install.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

deps: node_modules/.package-lock.json

synth: deps ## every stage through the pinned CLI, validation on, into cdk.out/
	$(CDK) synth --quiet --output cdk.out

test: deps test-go test-consumer ## golden, contract, construct, consumer and Lambda tests

test-go:
	$(TEST_ENV) go test -count=1 $(GO_PACKAGES)

# The consumer is built outside the workspace, as another team's module would be.
test-consumer:
	cd test/consumer && GOWORK=off $(TEST_ENV) go test -count=1 ./...

snapshots: deps ## rewrite test/snapshots from the app; review the diff before committing
	$(TEST_ENV) go test -count=1 ./test -run '^TestGolden$$' -update
	git status --short test/snapshots

lint: ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PACKAGES)
	cd test/consumer && GOWORK=off go vet ./...
	go run $(STATICCHECK) $(GO_PACKAGES)

clean:
	rm -rf cdk.out bin
