// Module consumer is a stand-in for another team's CDK app: it imports the
// dynastack constructs the way any Go module would, outside the workspace.
module example.com/teamstack

go 1.26.0

require (
	github.com/aws/aws-cdk-go/awscdk/v2 v2.276.0
	github.com/aws/constructs-go/constructs/v10 v10.8.1
	github.com/aws/jsii-runtime-go v1.142.0
	github.com/dynastack/dynastack/constructs v0.0.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/cdklabs/awscdk-asset-awscli-go/awscliv1/v2 v2.2.292 // indirect
	github.com/cdklabs/awscdk-asset-node-proxy-agent-go/nodeproxyagentv6/v2 v2.1.3 // indirect
	github.com/cdklabs/cloud-assembly-schema-go/awscdkcloudassemblyschema/v55 v55.3.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/yuin/goldmark v1.7.16 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/lint v0.0.0-20241112194109-818c5a804067 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261009151841-97e8ea77aa2a // indirect
	golang.org/x/tools v0.52.0 // indirect
	golang.org/x/tools/cmd/godoc v0.1.0-deprecated // indirect
	golang.org/x/tools/godoc v0.1.0-deprecated // indirect
)

// A real consumer pins a released version instead of this replace.
replace github.com/dynastack/dynastack/constructs => ../../constructs
