package iameval

import (
	"fmt"
	"strings"
)

// Env is where a template is deployed, for resolving its intrinsic
// functions.
type Env struct {
	Partition, Region, Account string
}

// Resolve replaces the intrinsic functions of v (a part of a template's
// Resources) with plain strings: the pseudo parameters from env, Ref and
// Fn::GetAtt of the template's resources by type (Ref gives an SNS
// topic's ARN, an HTTP API's id; GetAtt …Arn an ARN built from the
// logical id), and Fn::Join. What it cannot resolve
// is an error, so a test never evaluates a half-read policy.
func Resolve(v any, resources map[string]any, env Env) (any, error) {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			r, err := Resolve(x, resources, env)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				if strings.HasPrefix(k, "Fn::") || k == "Ref" {
					return intrinsic(k, arg, resources, env)
				}
			}
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			r, err := Resolve(x, resources, env)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

func intrinsic(fn string, arg any, resources map[string]any, env Env) (any, error) {
	switch fn {
	case "Ref":
		name, _ := arg.(string)
		switch name {
		case "AWS::Partition":
			return env.Partition, nil
		case "AWS::Region":
			return env.Region, nil
		case "AWS::AccountId":
			return env.Account, nil
		case "AWS::URLSuffix":
			return "amazonaws.com", nil
		}
		typ, err := typeOf(resources, name)
		if err != nil {
			return nil, err
		}
		switch typ {
		case "AWS::SNS::Topic":
			return ARN(env, "sns", name), nil
		case "AWS::SQS::Queue":
			return "https://sqs." + env.Region + ".amazonaws.com/" + env.Account + "/" + name, nil
		}
		// Most resources' Ref is a name or an id: the logical id stands
		// for it.
		return name, nil
	case "Fn::GetAtt":
		parts, _ := arg.([]any)
		if len(parts) != 2 {
			return nil, fmt.Errorf("Fn::GetAtt %v", arg)
		}
		name, _ := parts[0].(string)
		attr, _ := parts[1].(string)
		typ, err := typeOf(resources, name)
		if err != nil {
			return nil, err
		}
		if attr != "Arn" {
			return nil, fmt.Errorf("Fn::GetAtt %s.%s is not understood", name, attr)
		}
		switch typ {
		case "AWS::KMS::Key":
			return ARN(env, "kms", "key/"+name), nil
		case "AWS::SNS::Topic":
			return ARN(env, "sns", name), nil
		case "AWS::SQS::Queue":
			return ARN(env, "sqs", name), nil
		case "AWS::Lambda::Function":
			return ARN(env, "lambda", "function:"+name), nil
		case "AWS::IAM::Role":
			return "arn:" + env.Partition + ":iam::" + env.Account + ":role/" + name, nil
		case "AWS::IAM::OIDCProvider":
			// Named by its URL's host, which the template holds.
			url := ""
			if r, ok := resources[name].(map[string]any); ok {
				if p, ok := r["Properties"].(map[string]any); ok {
					url, _ = p["Url"].(string)
				}
			}
			return "arn:" + env.Partition + ":iam::" + env.Account + ":oidc-provider/" + strings.TrimPrefix(url, "https://"), nil
		case "AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable":
			return ARN(env, "dynamodb", "table/"+name), nil
		case "AWS::Events::EventBus":
			return ARN(env, "events", "event-bus/"+name), nil
		case "AWS::Logs::LogGroup":
			// A log group's Arn attribute ends in :* (its streams).
			return ARN(env, "logs", "log-group:"+name+":*"), nil
		}
		return nil, fmt.Errorf("Fn::GetAtt %s.Arn of a %s is not understood", name, typ)
	case "Fn::Join":
		parts, _ := arg.([]any)
		if len(parts) != 2 {
			return nil, fmt.Errorf("Fn::Join %v", arg)
		}
		sep, _ := parts[0].(string)
		list, err := Resolve(parts[1], resources, env)
		if err != nil {
			return nil, err
		}
		items, err := strs(list)
		if err != nil {
			return nil, fmt.Errorf("Fn::Join: %w", err)
		}
		return strings.Join(items, sep), nil
	}
	return nil, fmt.Errorf("%s is not understood", fn)
}

func typeOf(resources map[string]any, name string) (string, error) {
	r, ok := resources[name].(map[string]any)
	if !ok {
		return "", fmt.Errorf("resource %s: no such resource in the template (Ref, Fn::GetAtt)", name)
	}
	typ, _ := r["Type"].(string)
	return typ, nil
}

// ARN is an ARN of env: arn:<partition>:<service>:<region>:<account>:<resource>.
func ARN(env Env, service, resource string) string {
	return "arn:" + env.Partition + ":" + service + ":" + env.Region + ":" + env.Account + ":" + resource
}
