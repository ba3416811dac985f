# dynastack: one entry point for people and CI. Every target installs what it
# needs itself (npm packages from package-lock.json, Go modules on demand).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# Node 22 comes from package.json (the npm package `node`), so every make
# target — the CDK CLI, DynamoDB Local's launcher and the jsii runtime that Go
# test binaries start as `node` from PATH — runs on it whatever Node the
# machine has.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
NODE_FLOOR := 22
# The CDK CLI otherwise forks a telemetry sender on every command.
export CDK_DISABLE_CLI_TELEMETRY := true
# Go test binaries read no validation: jsii copies the environment when the
# bindings load, so it must be set before the binary starts. `make synth`
# keeps validation on.
TEST_ENV := CDK_VALIDATION=false
# One set of compiler flags for every go command make starts, and for the
# ones its tests start (the local runner's build, the reload's, the
# bundling's): -trimpath is part of a package's build-cache key, and the
# runner and the bundling build with it, so without it here the test build
# compiled every dependency once and the runner's build compiled them all
# again (on an empty cache 240 s of CPU, the SDK's EC2 client most of it).
export GOFLAGS := $(strip -trimpath $(filter-out -trimpath,$(GOFLAGS)))

# The Go toolchain every build, test and Lambda bundle here uses, fetched
# through the module proxy by the go command on first use (about 70 MB,
# once per machine). go1.26.8, the machines' own, has standard-library
# vulnerabilities the functions reach (crypto/x509's distrust of
# compromised intermediates, net/http; make vulncheck lists them), fixed in
# the patch release go1.26.10. go1.27.3 fixes them too but changes
# encoding/json: an error from a field's UnmarshalJSON (api.Optional) no
# longer names the field, so a 400 validation_failed naming it becomes a
# bare bad_request (three tests say so); moving to 1.27 needs that first.
export GOTOOLCHAIN := go1.26.10

# A bearer token is never a make command-line variable: make keeps those in
# MAKEFLAGS, which every recipe and child process inherits (readable in
# /proc), and the shell keeps the command in its history. Refused before
# any recipe runs; the ways that keep it out of argv are a file, standard
# input or the environment (docs/smoke.md, "Stak token"). Recipes pass the
# token on in the environment, never expanded into a command line.
ifeq ($(origin STAK_TOKEN),command line)
$(error STAK_TOKEN=… on make's command line is refused (make passes it to every child in MAKEFLAGS, ps and /proc show it, the shell history keeps it): give the token as STAK_TOKEN_FILE=<path> naming a file only you can read (chmod 600), STAK_TOKEN_FILE=- to read it from standard input, or STAK_TOKEN exported in the environment (docs/smoke.md))
endif

MODULES     := constructs lambdas lambdas/client infra app test
GO_PACKAGES := $(addsuffix /...,$(addprefix ./,$(MODULES)))
CDK         := node_modules/.bin/cdk
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
ACTIONLINT  := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
# govulncheck reads Go's vulnerability database. vuln.go.dev is not
# reachable from every machine that builds this (nor is GitHub), but the
# database's source is a module on the proxy: its OSV entries are indexed
# into bin/ once per version with the database's own tool (cmd/indexdb,
# about 2 minutes on an empty build cache, then instant). Bump
# VULNDB_VERSION to the proxy's newest pseudo-version to see new entries.
GOVULNCHECK    := golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
VULNDB         := bin/vulndb-$(VULNDB_VERSION)
# The JSON Schema library is a patched copy behind a replace
# (lambdas/third_party/jsonschema), which hides its upstream release from
# govulncheck: make vulncheck scans that release's module graph in a module
# of its own, with golang.org/x/text at the version lambdas/go.mod selects
# (the copy's go.mod asks for v0.14.0; the functions link lambdas').
JSONSCHEMA_UPSTREAM := github.com/santhosh-tekuri/jsonschema/v6@v6.0.3
# AWS's Lambda Runtime Interface Emulator. The module has no semver tag, so
# the Go module proxy lists only this pseudo-version (its newest commit,
# 2026-10-30): pinned by it.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE         := bin/aws-lambda-rie-$(RIE_VERSION)
# Local KMS (github.com/nsmithuk/local-kms), the KMS emulator make dev and
# the Go tests start like DynamoDB Local (lambdas/devtools/kmslocal finds
# it here). No semver tag either: pinned by its pseudo-version, which must
# equal kmslocal.Version.
LOCAL_KMS_VERSION := v0.0.0-20260228092603-2a5e92d09ab6
LOCAL_KMS         := bin/local-kms-$(LOCAL_KMS_VERSION)

# make guard compares the golden files at BASE with the working tree.
BASE ?= $(shell git merge-base HEAD origin/main 2>/dev/null || git rev-parse --verify -q HEAD~1 || git rev-parse HEAD)
STAGE ?= dev

.PHONY: vulncheck all help deps dev token admin load smoke test-fast synth-dev bootstrap-cache beside-test-go adopt restore-plan migrate apidiff bench bench-synth deploy drift synth nag-report controls test test-go test-fuzz test-consumer test-workflows test-artifact qemu snapshots guard diff lint clean

# A bare `make` lists the targets: the full test run takes minutes, and CI
# names its target (`.ci/run` runs `make test`).
.DEFAULT_GOAL := help

help: ## this list
	@echo "usage: make <target> [VAR=value]"
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z][a-z-]*:[^=]*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

all: test

# npm ci only when the lock file changed since the last install. On a
# machine with an older Node, npm may warn once that packages want Node 22:
# the Node 22 it installs here is the one every target uses from then on.
node_modules/.package-lock.json: package.json package-lock.json
	@echo "deps: npm ci (Node $(NODE_FLOOR), the CDK CLI, DynamoDB Local; first run only, about 30 s)"
	npm ci --no-audit --no-fund
	@node -e 'const m = +process.versions.node.split(".")[0]; if (m < $(NODE_FLOOR)) { console.error("node " + process.version + " is first on PATH; dynastack needs Node >= $(NODE_FLOOR) (package.json installs it into node_modules/.bin)"); process.exit(1) }'

deps: node_modules/.package-lock.json

# The local runner is built, then exec'd: make forwards SIGINT/SIGTERM to it,
# and it stops DynamoDB Local (its own process group) before exiting. With
# -reload it rebuilds and restarts the functions on a saved Go change and
# re-runs the synth below on an infra change, keeping DynamoDB Local and its
# data (lambdas/devtools/cmd/local/reload.go; DEVELOPERS.md "make dev reloads").
token: ## an end-user token for make dev's JWT routes (Stak's feed, read, stats): make token TENANT=acme USER=u1
	@# USER must come from the command line: the shell's login name is no uid.
	@if [ "$(origin USER)" != "command line" ] || [ -z "$(TENANT)" ]; then echo "usage: make token TENANT=<tenant> USER=<uid>" >&2; exit 2; fi
	@cd lambdas && go run ./devtools/cmd/local token -tenant "$(TENANT)" -user "$(USER)"

dev: deps $(LOCAL_KMS) ## synth dev, start DynamoDB Local, serve every service on 127.0.0.1:8080 (PORT=9090 make dev)
	@port=$${PORT:-8080}; if (exec 3<>/dev/tcp/127.0.0.1/$$port) 2>/dev/null; then \
		free=$$port; while [ $$free -lt $$((port + 100)) ] && (exec 3<>/dev/tcp/127.0.0.1/$$free) 2>/dev/null; do free=$$((free + 1)); done; \
		echo "dev: port $$port on 127.0.0.1 is in use (another make dev?); choose another: PORT=$$free make dev" >&2; exit 1; fi
	@$(MAKE) -s synth-dev
	@echo "dev: building the local runner"
	@mkdir -p bin && cd lambdas && go build -trimpath -o ../bin/local ./devtools/cmd/local
	exec bin/local -templates cdk.out/assembly-dev -reload -synth "$(MAKE) -s synth-dev"

# Browse the tables of a running `make dev` (its ready line names the endpoint).
admin: deps ## dynamodb-admin on 127.0.0.1:8001 for a running make dev (DYNAMO_ENDPOINT=<its dynamodb URL>, ADMIN_PORT=8001)
	@test -n "$${DYNAMO_ENDPOINT:-}" || { echo "set DYNAMO_ENDPOINT to the DynamoDB Local URL printed by make dev"; exit 2; }
	node_modules/.bin/dynamodb-admin --host 127.0.0.1 --port $${ADMIN_PORT:-8001}

# Offline: a live table's `aws dynamodb describe-table` output (and
# optionally describe-time-to-live, describe-continuous-backups and
# list-tags-of-resource outputs) against the table of SERVICE in the STAGE
# templates: the golden files, or TEMPLATES=cdk.out after a make synth.
# bin/adopt exits 0 (mapping file written, its path on stdout), 1 (a line
# per difference) or 2 (bad input); make turns any failure into its own 2,
# the printed lines say which. docs/adopting-tables.md is the runbook.
TEMPLATES ?= test/snapshots
restore-plan: ## the commands of a point-in-time restore of one table (STAGE= SERVICE= TABLE=<construct id> TIME=<RFC 3339>; docs/restoring.md)
	@if [ -z "$(STAGE)" ] || [ -z "$(SERVICE)" ] || [ -z "$(TABLE)" ] || [ -z "$(TIME)" ]; then \
		echo "usage: make restore-plan STAGE=<stage> SERVICE=<service> TABLE=<construct id: Tickets, Inbox, App, Audit, Messages, Table> TIME=<RFC 3339, e.g. 2026-03-01T09:30:00Z> [TEMPLATES=test/snapshots]" >&2; exit 2; fi
	@go run ./infra/cmd/restoreplan -stage "$(STAGE)" -service "$(SERVICE)" -table "$(TABLE)" -time "$(TIME)" -templates "$(or $(TEMPLATES),test/snapshots)"

adopt: ## can a stage's stack import a live table as it is? offline (STAGE= SERVICE= DESCRIBE="describe-table.json [ttl.json pitr.json tags.json]")
	@if [ "$(origin STAGE)" != "command line" ] || [ -z "$(SERVICE)" ] || [ -z "$(DESCRIBE)" ]; then \
		echo "usage: make adopt STAGE=<stage> SERVICE=<service> DESCRIBE=\"<describe-table.json> [describe-time-to-live.json] [describe-continuous-backups.json] [list-tags-of-resource.json]\" [TEMPLATES=test/snapshots]" >&2; exit 2; fi
	@mkdir -p bin && go build -o bin/adopt ./infra/cmd/adopt
	@bin/adopt -stage "$(STAGE)" -service "$(SERVICE)" -templates "$(TEMPLATES)" -out cdk.out/adopt $(DESCRIBE)

# A service's data migrations against a stage's tables (names from the
# stage's golden template, or the contract's variable when set: DynamoDB
# Local), with the stage's credentials in the environment. DRY_RUN=1
# counts and shows samples, writing nothing; CHECK=1 reads a sample and
# says which migrations it needs (exit 1 when one is); ID= runs one. The
# engine is lambdas/ops/migrate, the command lambdas/ops/migrator, the
# runbooks the "Cutover" sections of docs/schemas/<service>.md.
migrate: ## run a service's data migrations on a stage (STAGE= SERVICE= [DRY_RUN=1] [CHECK=1] [ID=] [READ_UNITS=50 WRITE_UNITS=25])
	@if [ "$(origin STAGE)" != "command line" ] || [ -z "$(SERVICE)" ]; then \
		echo "usage: make migrate STAGE=<stage> SERVICE=<service> [DRY_RUN=1] [CHECK=1] [ID=<migration>] [READ_UNITS=50] [WRITE_UNITS=25]" >&2; exit 2; fi
	@mkdir -p bin && cd lambdas && go build -o ../bin/migrator ./ops/migrator
	@bin/migrator -stage "$(STAGE)" -service "$(SERVICE)" -templates test/snapshots -reports cdk.out/migrate \
		$(if $(DRY_RUN),-dry-run) $(if $(CHECK),-check) $(if $(ID),-only "$(ID)") \
		-read-units "$(or $(READ_UNITS),50)" -write-units "$(or $(WRITE_UNITS),25)"

# Cost, then time, against DynamoDB Local. First each service's TestCost
# table: per API operation the DynamoDB requests and consumed capacity
# (devtools/ddbrecord) beside the least its access pattern needs (make test
# asserts these too). Then the handler vs raw SDK benchmarks, which report
# req/RCU/WCU per op as well, summed up in one table: the ratio is the
# handler's overhead. Then every API operation over recorded DynamoDB
# answers (devtools/ddbcanned; medians of CPU_COUNT runs): the handler's own
# CPU beside its raw SDK twin's, with B/op, allocs/op and the time at a
# 256 MB Lambda's CPU share. Last, each
# function's cold start under the Runtime Interface Emulator beside a
# minimal aws-lambda-go function (devtools/cmd/coldstart). Timings are not
# assertions, so this is not in make test.
# The canned step: every operation of each service's cost table through
# the handler beside its generic raw SDK twin (BenchmarkAPI,
# servicetest.Canned), then the hand-written pairs (ddbcanned.Pair) as a
# cross-check, one table. The patterns name the benchmarks: go test runs
# every other top-level benchmark once (b.N=1) to look for sub-benchmarks,
# which for Stak's read-all is minutes of DynamoDB Local setup; the
# DynamoDB Local step leaves BenchmarkAPI out (^Benchmark([^A]|A[^P])),
# whose recording would run there for sub-benchmarks it skips.
CPU_BENCH_PKGS := ./services/itsm ./services/rezagent ./services/nucleus ./services/stak ./services/agenticpm
CPU_PAIR_PKGS := ./services/itsm ./services/rezagent
bench: deps $(RIE) $(LOCAL_KMS) ## per operation: DynamoDB requests and capacity beside the minimum, handler vs raw SDK time, handler CPU, cold starts (BENCHTIME=300x CPU_BENCHTIME=400x CPU_COUNT=3 COLD_RUNS=21)
	cd lambdas && go test -count=1 -p 1 -run '^TestCost$$/^Cost$$' -v ./services/... \
		| grep -E 'cost per operation|^ +\|' | sed -E 's/^ +//; s/^cost_test.go:[0-9]+: //'
	cd lambdas && go test -p 1 -run '^$$' -bench '^Benchmark([^A]|A[^P])' -skip '/canned' -benchtime=$${BENCHTIME:-300x} -benchmem ./services/... \
		| go run ./devtools/ddbrecord/cmd/benchcost
	cd lambdas && { go test -p 1 -run '^$$' -bench '^BenchmarkAPI$$/canned' -benchtime=$${CPU_BENCHTIME:-400x} -count=$${CPU_COUNT:-3} -benchmem $(CPU_BENCH_PKGS) && \
		go test -p 1 -run '^$$' -bench '^Benchmark(CreateTicket|GetTicket|AddComment|ListByCaller|GetMessage|ListMessages)$$/canned' -benchtime=$${CPU_BENCHTIME:-400x} -count=$${CPU_COUNT:-3} -benchmem $(CPU_PAIR_PKGS); } \
		| go run ./devtools/ddbrecord/cmd/benchcost
	cd lambdas && go run ./devtools/cmd/coldstart -rie $(CURDIR)/$(RIE) -runs $${COLD_RUNS:-21}

# A bounded load test of a running make dev (devtools/load): per service a
# mix of creates, reads, updates and list pages, then integrity checks
# (acknowledged creates readable and listed once, no list item twice, the
# services' counts equal to the acknowledged writes). Run make dev first;
# with FAULTS=drop:0.1 make dev it proves the same under lost answers.
# make test runs its short form (devtools/cmd/local TestLoad).
load: ## load test a running make dev, then check integrity (N=400 C=8 SERVICES=itsm,stak BASE_URL=http://127.0.0.1:8080)
	@cd lambdas && tok=$$(go run ./devtools/cmd/local token -tenant load -user u1) && \
		STAK_TOKEN="$$tok" STAK_TOKEN_FILE= go run ./devtools/cmd/load -base "$${BASE_URL:-http://127.0.0.1:$${PORT:-8080}}" -n $${N:-400} -c $${C:-8} -services "$${SERVICES:-}"

# A short end-to-end check of every service (devtools/smoke; docs/smoke.md):
# create, read, list, a state change and cleanup where the API deletes;
# what it cannot delete stays, marked as smoke data, and is listed. Exits
# non-zero naming each failed check. LOCAL: a running make dev, Stak's
# token minted as make token mints it. STAGE: a deployed stage, URLs from
# its stacks' ApiUrl outputs, requests signed with SigV4 (AWS credentials
# and region from the environment), and a token of the stage's identity
# provider from STAK_TOKEN_FILE (a file only its owner can read; - is
# standard input) or STAK_TOKEN exported in the environment; bin/smoke
# reads either from its environment, and neither is ever on a command
# line (STAK_TOKEN=… on make's is refused above). bin/smoke exits 1 on a
# failed check, 2 when it cannot start; make turns either into its own 2
# (its error line names which). make test runs the local form (cmd/local
# TestSmoke).
smoke: ## end-to-end check of every service: make smoke LOCAL=<make dev URL> | make smoke STAGE=<stage> STAK_TOKEN_FILE=<token file, or - for stdin> (docs/smoke.md)
	@if [ -n "$(LOCAL)" ] && [ "$(origin STAGE)" != "command line" ]; then \
		mkdir -p bin && go build -o bin/smoke ./lambdas/devtools/cmd/smoke && \
		tok=$$(cd lambdas && go run ./devtools/cmd/local token -tenant smoke -user smoke-user) && \
		STAK_TOKEN="$$tok" STAK_TOKEN_FILE= bin/smoke -local "$(LOCAL)" $(SMOKE_FLAGS); \
	elif [ -z "$(LOCAL)" ] && [ "$(origin STAGE)" = "command line" ]; then \
		mkdir -p bin && go build -o bin/smoke ./lambdas/devtools/cmd/smoke && \
		bin/smoke -stage "$(STAGE)" $(SMOKE_FLAGS); \
	else echo "usage: make smoke LOCAL=<make dev URL, e.g. http://127.0.0.1:8080> | make smoke STAGE=<stage> STAK_TOKEN_FILE=<file only you can read, or - for standard input> (or STAK_TOKEN exported) [SMOKE_FLAGS='-region … -url <service>=<URL> -wait 60s']" >&2; exit 2; fi

# Needs AWS credentials and a bootstrapped account; IAM or security group
# widening asks for confirmation. The app refuses, before any stack exists
# (so before any CloudFormation call), a stage whose settings are still
# placeholders: -c dynastack:deploy names the stage (a bare cdk deploy is
# recognised too; docs/stage-policy.md, "Deploy preflight").
# CDK_OUT is where deploy synthesizes (the CLI locks it while it does):
# test/deploy_test.go gives its own, so its deploys do not meet the dev
# synth that make test runs beside the Go tests.
CDK_OUT ?= cdk.out
# SERVICE=<service> deploys that service's stack only (-e: the CLI
# bundles no other stack's functions); each stack deploys to its own
# account and Region (infra/config Stage.Services, docs/deploying.md).
deploy: deps ## cdk deploy every stack of a stage, or one (SERVICE=itsm); needs AWS credentials; refuses placeholder settings outside dev (STAGE=dev)
	@if [ -n "$(SERVICE)" ]; then case " $(SERVICES_DIRS) " in *" $(SERVICE) "*) ;; *) echo "deploy: SERVICE='$(SERVICE)' is no service; one of: $(SERVICES_DIRS)" >&2; exit 2;; esac; fi
	$(CDK) deploy -c dynastack:deploy=$(STAGE) --output $(CDK_OUT) --require-approval broadening $(if $(SERVICE),-e '$(STAGE)/$(SERVICE)','$(STAGE)/*')

# The app fails the synth on cdk-nag errors, on CloudFormation validation
# errors and on Control Tower findings (a validation plugin: cdk deploy runs
# them too).
synth: deps ## every stage through the pinned CLI into cdk.out/: cdk-nag, CloudFormation validation, Control Tower controls
	$(CDK) synth --quiet --output cdk.out

nag-report: deps ## make synth plus cdk-nag's CSV compliance reports, every rule and resource: cdk.out/*-NagReport.csv
	$(CDK) synth --quiet --output cdk.out -c dynastack:nagReports=true
	@ls cdk.out/*-NagReport.csv

# AWS Control Tower's proactive controls: the cfn-guard binary and rules of
# the pinned npm package @cdklabs/cdk-validator-cfnguard, plus dynastack's
# rules for GlobalTables (infra/controls/rules), over every template under
# CONTROLS_DIR (the stages' golden files and the bootstrap stacks'). A
# finding is fixed, or suppressed with a reason in
# infra/controls/suppressions.go; an unused suppression fails too. make
# test runs the same check over the golden files as a Go test
# (infra/controls TestGoldenFilesPassControls, replayed from the test
# cache while they, the rules and the package are unchanged), and every
# synth runs the controls as a validation plugin.
CONTROLS_DIR ?= test/snapshots test/bootstrap-snapshots
controls: deps ## Control Tower controls (cfn-guard) over the golden files, bootstrap stacks included (CONTROLS_DIR=cdk.out after a synth)
	go run ./infra/cmd/controls $(CONTROLS_DIR)

bench-synth: deps ## make synth beside an empty CDK Go app through the same CLI, in one run (RUNS=5)
	test/synthbench/bench.sh

# The Go tests spend much of their time waiting (on DynamoDB Local, the
# CDK CLI, TTL sweeps, the runner's processes), so three things run beside
# them, one after the other (beside-test-go): fuzzing, whose instrumented
# build takes about three minutes on a fresh clone, bootstrap-cache
# (below), and the artifact test with the dev synth it needs (no Go test
# reads cdk.out: they synthesize into their own folders). Run after the Go
# tests, those two were half a minute of one busy core at the end of every
# run that changed an input of the synth. npm ci (mostly waiting on the
# network and the disk) runs beside Local KMS's build. Output is not
# synchronized: make's --output-sync holds a recipe line's output until it
# ends, and test-go's go test is one line of many minutes, so its progress
# lines (the first build, DynamoDB Local's start, each package's result)
# would all come at the end; each tool writes whole lines, so the streams
# interleave by line. The tree hash is computed once and handed down.
test: ## golden, contract, policy, construct, consumer, guard, Lambda, recorded IAM calls, fuzz, workflow, Control Tower and artifact tests
	@$(MAKE) --no-print-directory -j2 TREE_HASH=$(TREE_HASH) test-go beside-test-go
	@$(MAKE) --no-print-directory TREE_HASH=$(TREE_HASH) test-consumer test-workflows

# bootstrap-cache compiles the Lambda mains for linux/arm64 with the
# bundling's flags (gofunction.BuildFlags; test/makefile_test.go keeps
# LAMBDA_BUILD_FLAGS equal), beside the Go tests, into Go's build cache:
# the dev synth's batch build then finds every package compiled and only
# links. On a fresh clone that compile (the standard library, the
# DynamoDB client and the rest of the mains' packages for arm64) otherwise
# runs inside the synth, after the tests, largely on one core.
# go list -export compiles without linking; on a warm cache it only
# checks (about a second).
LAMBDA_BUILD_FLAGS := -tags lambda.norpc -trimpath -buildvcs=false -ldflags "-s -w"
bootstrap-cache:
	cd lambdas && GOOS=linux GOARCH=arm64 CGO_ENABLED=0 GOWORK=off go list -export $(LAMBDA_BUILD_FLAGS) ./cmd/... >/dev/null

# One after the other: as two goals of the -j2 step they took both slots
# while test-go waited for Local KMS, and the longest step started last.
# The dev synth comes after bootstrap-cache, so its batch build only links.
beside-test-go:
	@$(MAKE) --no-print-directory test-fuzz
	@$(MAKE) --no-print-directory bootstrap-cache
	@$(MAKE) --no-print-directory test-artifact

# The Go tests record, per function, every DynamoDB call its code makes
# (operation and table or index, lambdas/devtools/ddbrecord) into
# CALLS_DIR; test/iamcalls then checks those calls against each function's
# IAM policy both ways. The check needs every recording suite done, so it
# runs as its own step after them (it skips inside the first run).
CALLS_DIR := $(CURDIR)/bin/calls

# Every package shares one DynamoDB Local (devtools/cmd/ddblocal starts it
# and passes its endpoint): each test creates tables of its own names, and
# one Java process replaces one per package.
#
# Go's test cache replays the result of a package whose test binary and
# inputs are unchanged since it passed: its code and everything it
# imports, the environment variables its tests read, and the files they
# read inside their own module. The modules read each other's files
# (golden templates, cdk.json, docs, the assembly), in other processes too,
# so a test that finds the repository (repo.Root, config.RepoRoot,
# cdktest's cdk.json) reads DYNASTACK_TREE_HASH: the hash of every file of
# the tree (tracked, or untracked and not ignored) and of the Go and Node
# versions, computed once per make run. The shared DynamoDB Local keeps its
# port from run to run (its jar is an input as well). So an unchanged tree
# replays every result, and a change runs the packages it can reach;
# DEVELOPERS.md, "The test cache", says what it keys on. FRESH=1 runs
# every test again (go clean -testcache first, so the new results are
# cached in turn; CI starts from empty caches, so it always does), as does
# a run whose call recordings are gone: test/iamcalls needs every
# package's.
#
# go test runs one package more than there are cores (TEST_P; go's default
# is one per core): most packages spend their time waiting on DynamoDB
# Local, TTL sweeps, the CDK CLI or processes, and with two cores two such
# packages left both idle for most of a minute. On the 2-core machine, every
# test executed (FRESH=1), one run each: 189 s with -p 2, 167 s with 3,
# 168 s with 4.
TEST_P ?= $(shell echo $$(( $$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1 )))
TREE_HASH = $(eval TREE_HASH := $(shell $(call inputs_hash)))$(TREE_HASH)
TEST_ENV_TREE = $(TEST_ENV) DYNASTACK_TREE_HASH=$(TREE_HASH)
test-go: deps $(LOCAL_KMS)
	@if [ -n "$(FRESH)" ] || [ ! -d $(CALLS_DIR) ]; then \
		echo "test-go: every test runs$(if $(FRESH),, (no call recordings yet))"; rm -rf $(CALLS_DIR); go clean -testcache; \
	else echo "test-go: unchanged packages replay their cached results (FRESH=1 runs all)"; fi
	mkdir -p $(CALLS_DIR)
	DYNASTACK_CALLS_DIR=$(CALLS_DIR) $(TEST_ENV_TREE) go run ./lambdas/devtools/cmd/ddblocal -- go test -p $(TEST_P) $(GO_PACKAGES)
	DYNASTACK_CALLS_CHECK=$(CALLS_DIR) DYNASTACK_TREE_HASH=$(TREE_HASH) go test -run '^TestRecordedCallsAllowed$$' ./test/iamcalls

# A short fuzzing run of what parses client input: cursors, request bodies
# (and the single-pass body check against the token walk it replaced, its
# oracle), DynamoDB number ranges. Their seed corpora also run in test-go. A finding
# is written to the package's testdata/fuzz and fails the run.
# The budget is a count of executions per target (about 5 s each on this
# machine), not a duration: with -fuzztime=<duration> Go 1.26's fuzz
# coordinator can fail a clean run with "context deadline exceeded" when the
# deadline races a worker's shutdown (golang/go#75804, fixed in Go 1.27).
# FUZZTIME=<n>x or <duration> overrides every target's budget.
# Minimizing each new-coverage input may take up to 60 s by default, which
# stalls a short run (FuzzDecodeJSON: 7,700 executions instead of 110,000);
# 200 attempts per input keep the run fuzzing.
FUZZ_TARGETS := platform/ddb:FuzzDecodeCursor:120000x platform/api:FuzzDecodeJSON:60000x platform/api:FuzzCheckBody:30000x platform/ddb:FuzzValidNumber:45000x
FUZZTIME     ?=

test-fuzz:
	cd lambdas && for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; target=$${rest%%:*}; budget=$${FUZZTIME:-$${rest#*:}}; \
		go test -run '^$$' -fuzz "^$$target$$" -fuzztime=$$budget -fuzzminimizetime=200x ./$$pkg || exit 1; \
	done

# The inner loop: one service's Lambda code, unit and DynamoDB Local tests,
# with the server started once. make test runs these too, beside
# everything else.
SERVICES_DIRS := $(notdir $(patsubst %/,%,$(wildcard lambdas/services/*/)))
test-fast: deps $(LOCAL_KMS) ## one service's unit and integration tests in seconds (SERVICE=itsm)
	@case " $(SERVICES_DIRS) " in *" $(SERVICE) "*) ;; *) echo "test-fast: SERVICE='$(SERVICE)' is no service; one of: $(SERVICES_DIRS)" >&2; exit 2;; esac
	cd lambdas && $(TEST_ENV) go run ./devtools/cmd/ddblocal -- go test -count=1 ./services/$(SERVICE)/...

# The consumer is built outside the workspace, as another team's module would be.
test-consumer:
	cd test/consumer && GOWORK=off $(TEST_ENV_TREE) go test ./...

# actionlint, then test/workflows: actions pinned by SHA, the pull-request
# workflow's permission split, Dependabot covering every module.
test-workflows:
	go run $(ACTIONLINT) .github/workflows/*.yml
	DYNASTACK_TREE_HASH=$(TREE_HASH) go test ./test/workflows

$(LOCAL_KMS):
	@echo "installing local-kms $(LOCAL_KMS_VERSION) (go install; first run only)"
	@mkdir -p bin/lkms && GOBIN=$(CURDIR)/bin/lkms go install github.com/nsmithuk/local-kms@$(LOCAL_KMS_VERSION)
	@mv bin/lkms/local-kms $@ && rmdir bin/lkms

$(RIE):
	@echo "installing aws-lambda-rie $(RIE_VERSION) (go install; first run only)"
	@mkdir -p bin/rie && GOBIN=$(CURDIR)/bin/rie go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	@mv bin/rie/aws-lambda-rie $@ && rmdir bin/rie

# qemu-aarch64-static runs the arm64 bootstraps on another host. Installed
# with apt-get when root (or passwordless sudo) allows; otherwise the
# artifact test rebuilds each bootstrap for the host and says so.
qemu:
	@if [ "$$(uname -m)" = aarch64 ] || command -v qemu-aarch64-static >/dev/null; then exit 0; fi; \
	sudo=""; if [ "$$(id -u)" != 0 ]; then sudo -n true 2>/dev/null && sudo="sudo -n" || sudo=none; fi; \
	if [ "$$sudo" = none ] || ! command -v apt-get >/dev/null; then \
		echo "qemu-aarch64-static missing and cannot be installed here (needs apt-get as root): the artifact test runs host builds"; exit 0; fi; \
	echo "installing qemu-user-static (apt-get; first run only) to run the arm64 bootstraps"; \
	{ $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq qemu-user-static; } >/dev/null 2>&1 \
		|| echo "apt-get install qemu-user-static failed: the artifact test runs host builds"

# The bundled assets of a real synth of dev (the files cdk deploy uploads),
# run under the Runtime Interface Emulator with API Gateway and DynamoDB
# Streams events (test/artifact).
# The dev stage's cloud assembly with its bundled bootstraps, synthesized
# again only when an input changed: every tracked or new file under
# constructs, lambdas, infra and app, the workspace and lock files, the Go
# and Node versions. The synth is deterministic (the golden files prove
# it), so the same inputs give the same assembly; a warm make test or make
# dev skips a synth of a minute or more.
SYNTH_INPUTS := constructs lambdas infra app cdk.json go.work go.work.sum package.json package-lock.json
# inputs_hash is a shell command printing the content hash of the files
# under $(1) (the whole tree when empty; tracked, or untracked and not
# ignored) and of the Go and Node versions: the dev synth's cache key, and
# the tree's for the test cache (TREE_HASH).
inputs_hash = { go version; node --version; git ls-files -z -co --exclude-standard -- $(1) | xargs -0 sha256sum 2>/dev/null; } | sha256sum | cut -c1-64
synth-dev: deps
	@mkdir -p bin; h=$$($(call inputs_hash,$(SYNTH_INPUTS))); \
	if [ -f cdk.out/assembly-dev/.inputs ] && [ "$$(cat cdk.out/assembly-dev/.inputs)" = "$$h" ]; then \
		echo "synth: dev assembly up to date (inputs unchanged since its synth)"; exit 0; fi; \
	echo "synth: synthesizing dev with its Lambda bootstraps (about a minute)"; \
	$(CDK) synth --quiet --output cdk.out 'dev/*' >bin/synth-dev.log 2>&1 || { cat bin/synth-dev.log; exit 1; }; \
	echo "$$h" > cdk.out/assembly-dev/.inputs

test-artifact: deps $(RIE) qemu ## the dev stage's bootstraps under the Lambda emulator (arm64 under qemu when present)
	@$(MAKE) -s synth-dev
	@ARTIFACT_ASSEMBLY=$(CURDIR)/cdk.out/assembly-dev ARTIFACT_RIE=$(CURDIR)/$(RIE) DYNASTACK_TREE_HASH=$(TREE_HASH) go test -v ./test/artifact 2>&1 \
		| grep -Ev '^ *(=== (RUN|PAUSE|CONT)|--- PASS)'

snapshots: deps ## rewrite test/snapshots, test/bootstrap-snapshots, docs/api, docs/dashboards and the typed clients (lambdas/client) from the app and the contracts; review the diff before committing
	$(TEST_ENV) go test -count=1 ./test -run '^(TestGolden|TestGoldenBootstrap|TestDashboardRendering)$$' -update
	go run ./lambdas/devtools/cmd/openapi
	cd lambdas/client && go run ./cmd/clientgen
	git status --short test/snapshots test/bootstrap-snapshots docs/api docs/dashboards lambdas/client

guard: ## DynamoDB change hazards between the golden files at BASE and now
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	if ! git archive "$(BASE)" test/snapshots 2>/dev/null | tar -x -C "$$tmp" 2>/dev/null || [ ! -d "$$tmp/test/snapshots" ]; then \
		echo "guard: no golden files at $(BASE); nothing to compare"; exit 0; fi; \
	echo "guard: $(BASE) -> working tree"; \
	go build -o "$$tmp/ddbguard" ./infra/cmd/ddbguard && "$$tmp/ddbguard" $(GUARD_FLAGS) "$$tmp/test/snapshots" test/snapshots

# The constructs module's exported API at BASE against the working tree,
# with the pinned golang.org/x/exp/cmd/apidiff (infra/apicheck, installed
# into bin/ once). An incompatible change fails unless the top version of
# constructs/CHANGELOG.md bumps for it. Each service's OpenAPI document
# (docs/api) at BASE against now with the pinned oasdiff (installed into
# bin/ once): a breaking change fails unless the service's APIVersion gets
# a new major version with an entry in docs/api/CHANGELOG.md. make test runs
# the same checks on deliberate changes in test copies (infra/apicheck's
# tests).
apidiff: ## constructs' Go API and the services' HTTP APIs (docs/api) at BASE vs now: fails on a breaking change the version and CHANGELOG do not bump for (BASE=<rev>)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	if ! git archive "$(BASE)" constructs 2>/dev/null | tar -x -C "$$tmp" 2>/dev/null || [ ! -f "$$tmp/constructs/go.mod" ]; then \
		echo "apidiff: no constructs module at $(BASE); nothing to compare"; exit 0; fi; \
	echo "apidiff: constructs and docs/api at $(BASE) -> working tree"; \
	mkdir -p "$$tmp/docs/api"; { git archive "$(BASE)" docs/api 2>/dev/null | tar -x -C "$$tmp" 2>/dev/null || true; }; \
	go run ./infra/cmd/apicheck -old "$$tmp/constructs" -new constructs -bin bin -old-docs "$$tmp/docs/api" -new-docs docs/api

# Offline: the fresh synth against the golden files. With AWS credentials:
# the real cdk diff against the deployed stage as well (--fail). A
# difference or an unknown stage fails the target (make exits 2, the
# message says which). ASSEMBLY reads another synthesized cloud assembly
# (with SKIP_SYNTH=1; the tests use it).
# AWS_CREDENTIALS is non-empty (in a recipe's shell) when the environment
# names AWS credentials the CLI would use: keys, a profile, or a web
# identity token (the workflows' OIDC role).
AWS_CREDENTIALS = $${AWS_ACCESS_KEY_ID:-}$${AWS_PROFILE:-}$${AWS_WEB_IDENTITY_TOKEN_FILE:-}
STAGES   := $(sort $(notdir $(patsubst %/,%,$(wildcard test/snapshots/*/))))
ASSEMBLY ?= cdk.out
diff: deps ## fresh synth against the golden files, plus cdk diff with AWS credentials; fails on a difference or an unknown stage (STAGE=dev)
	@case " $(STAGES) " in *" $(STAGE) "*) ;; *) echo "diff: unknown stage '$(STAGE)'; valid stages: $(STAGES)" >&2; exit 2;; esac
	@if [ -z "$${SKIP_SYNTH:-}" ]; then $(MAKE) -s synth >/dev/null; fi
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	go run ./test/cmd/snapshot -assembly "$(ASSEMBLY)" -stage "$(STAGE)" -out "$$tmp"; \
	if diff -ru test/snapshots/$(STAGE) "$$tmp/$(STAGE)"; then \
		echo "$(STAGE): synthesized templates match test/snapshots/$(STAGE)"; \
	else echo "$(STAGE): synthesized templates differ from test/snapshots/$(STAGE) (make snapshots accepts them)" >&2; exit 1; fi
	@if [ -n "$(AWS_CREDENTIALS)" ]; then \
		$(CDK) diff --fail --app "$(ASSEMBLY)" '$(STAGE)/*'; \
	else echo "(no AWS credentials: skipped cdk diff against the deployed $(STAGE) stage)"; fi

# The pinned CLI's cdk drift over the stacks of a stage in its own account
# (CloudFormation's drift detection, so AWS credentials are needed: without
# them one line says so and make exits 2 before any synth), its output kept
# in bin/drift-<stage>.txt, then infra/cmd/drift: one line per stack with
# the table-relevant drift (indexes, PITR, TTL, streams, deletion
# protection, a deleted table) called out; it exits 1 when a stack drifted,
# which make reports as its own 2. DRIFT_FLAGS='-issues <dir>' writes one
# issue file per drifted stack (the drift workflow). SKIP_SYNTH=1 reads
# ASSEMBLY. The CLI reads each stack with the credentials it is given, in
# the stack's account, so a service placed in another account is left out
# (infra/cmd/driftplan) and checked with that account's credentials:
# SERVICE=<service> checks that service's stack only, into
# bin/drift-<stage>-<service>.txt.
drift: deps ## cdk drift of the stacks of a stage in its own account, or one (SERVICE=itsm), table drift called out; needs AWS credentials (without: one line, exit 2) (STAGE=dev)
	@case " $(STAGES) " in *" $(STAGE) "*) ;; *) echo "drift: unknown stage '$(STAGE)'; valid stages: $(STAGES)" >&2; exit 2;; esac
	@if [ -n "$(SERVICE)" ]; then case " $(SERVICES_DIRS) " in *" $(SERVICE) "*) ;; *) echo "drift: SERVICE='$(SERVICE)' is no service; one of: $(SERVICES_DIRS)" >&2; exit 2;; esac; fi
	@if [ -z "$(AWS_CREDENTIALS)" ]; then echo "drift: no AWS credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE or AWS_WEB_IDENTITY_TOKEN_FILE): cdk drift asks CloudFormation, nothing was checked" >&2; exit 2; fi
	@mkdir -p bin; stacks='$(STAGE)/$(SERVICE)'; \
	if [ -z "$(SERVICE)" ]; then stacks=$$(go run ./infra/cmd/driftplan -stacks $(STAGE)) || exit 2; fi; \
	if [ -z "$$stacks" ]; then echo "drift: no stack of $(STAGE) is in its own account; check each with SERVICE=<service> and that account's credentials" >&2; exit 2; fi; \
	$(CDK) drift $(if $(SKIP_SYNTH),--app "$(ASSEMBLY)") $$stacks 2>&1 | tee bin/drift-$(STAGE)$(if $(SERVICE),-$(SERVICE)).txt || true
	@go run ./infra/cmd/drift $(DRIFT_FLAGS) < bin/drift-$(STAGE)$(if $(SERVICE),-$(SERVICE)).txt

lint: vulncheck ## gofmt, go vet, staticcheck, govulncheck
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PACKAGES)
	cd test/consumer && GOWORK=off go vet ./...
	go run $(STATICCHECK) $(GO_PACKAGES)

$(VULNDB):
	@dir=$$(GOWORK=off GOFLAGS=-mod=mod go mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	test -d "$$dir/data/osv" || { echo "vulncheck: golang.org/x/vulndb@$(VULNDB_VERSION) has no data/osv" >&2; exit 1; }; \
	rm -rf $@.tmp && GOWORK=off go run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) -vulns "$$dir/data/osv" -out $@.tmp && mv $@.tmp $@

vulncheck: $(VULNDB) ## govulncheck: every module's code, the consumer module, and the JSON Schema copy's upstream release
	@for m in $(MODULES) test/consumer; do echo "govulncheck $$m"; \
		(cd $$m && GOWORK=off go run $(GOVULNCHECK) -db file://$(CURDIR)/$(VULNDB) ./...) || exit 1; done
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && cd "$$dir" && \
		printf 'module vulncheck.upstream\n\ngo 1.21\n' > go.mod && \
		printf 'package main\n\nimport _ "github.com/santhosh-tekuri/jsonschema/v6"\n\nfunc main() {}\n' > main.go && \
		GOWORK=off GOFLAGS=-mod=mod go get $(JSONSCHEMA_UPSTREAM) >/dev/null 2>&1 && \
		text=$$(cd $(CURDIR)/lambdas && GOWORK=off go list -m -f '{{.Version}}' golang.org/x/text) && \
		GOWORK=off GOFLAGS=-mod=mod go get golang.org/x/text@$$text >/dev/null 2>&1 && \
		GOWORK=off go run $(GOVULNCHECK) -db file://$(CURDIR)/$(VULNDB) -scan module

clean: ## remove cdk.out and bin
	rm -rf cdk.out bin
