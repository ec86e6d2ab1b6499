package serve

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// maxTemplateOutput bounds what a template override renders.
const maxTemplateOutput = 1 << 20

// templateFuncs are the functions a template override may call: the
// comparisons and lookups of Go's templates. print, printf and println are
// left out (a width of a billion would allocate before any write), as are
// define, template and block (recursion) and range over anything but a
// field (range 1000000000000 would spin without output).
var templateFuncs = map[string]bool{"and": true, "or": true, "not": true, "eq": true, "ne": true, "lt": true,
	"le": true, "gt": true, "ge": true, "len": true, "index": true, "slice": true}

// ollamaTemplateData is what an override sees, as ollama's Go templates
// name it: .System, .Prompt, .Suffix (fill-in-the-middle: the text after
// the insertion), .Response (the answer's place: the output ends there),
// .Messages (Role, Content).
type ollamaTemplateData struct {
	System, Prompt, Suffix, Response string
	Messages                         []struct{ Role, Content string }
}

// renderOllamaTemplate renders /api/generate's "template" (a Go template,
// as ollama's Modelfile TEMPLATE) with the system and user prompt; the text
// stops where .Response would go.
func renderOllamaTemplate(src, system, prompt, suffix string) (string, *apiError) {
	t, err := template.New("template").Option("missingkey=error").Parse(src)
	if err != nil {
		return "", badParam("template", "%v", err)
	}
	if len(t.Templates()) > 1 {
		return "", badParam("template", "define, template and block are not supported")
	}
	if err := checkTemplate(t.Tree.Root); err != nil {
		return "", badParam("template", "%v", err)
	}
	const mark = "\x00krafla-response\x00"
	d := ollamaTemplateData{System: system, Prompt: prompt, Suffix: suffix, Response: mark}
	if system != "" {
		d.Messages = append(d.Messages, struct{ Role, Content string }{"system", system})
	}
	d.Messages = append(d.Messages, struct{ Role, Content string }{"user", prompt})
	var b limitedBuilder
	if err := t.Execute(&b, d); err != nil {
		return "", badParam("template", "%v", err)
	}
	out, _, _ := strings.Cut(b.String(), mark)
	return out, nil
}

// checkTemplate refuses the nodes renderOllamaTemplate does not run.
func checkTemplate(n parse.Node) error {
	switch x := n.(type) {
	case nil:
		return nil
	case *parse.ListNode:
		if x == nil {
			return nil
		}
		for _, c := range x.Nodes {
			if err := checkTemplate(c); err != nil {
				return err
			}
		}
	case *parse.ActionNode:
		return checkPipe(x.Pipe)
	case *parse.IfNode:
		return checkBranch(&x.BranchNode)
	case *parse.WithNode:
		return checkBranch(&x.BranchNode)
	case *parse.RangeNode:
		if len(x.Pipe.Cmds) != 1 || len(x.Pipe.Cmds[0].Args) != 1 {
			return errors.New("range goes over a field such as .Messages only")
		}
		if _, ok := x.Pipe.Cmds[0].Args[0].(*parse.FieldNode); !ok {
			return errors.New("range goes over a field such as .Messages only")
		}
		return checkBranch(&x.BranchNode)
	case *parse.TemplateNode:
		return errors.New("define, template and block are not supported")
	case *parse.TextNode, *parse.CommentNode, *parse.BreakNode, *parse.ContinueNode:
	default:
		return fmt.Errorf("%s is not supported", n)
	}
	return nil
}

func checkBranch(b *parse.BranchNode) error {
	if err := checkPipe(b.Pipe); err != nil {
		return err
	}
	if err := checkTemplate(b.List); err != nil {
		return err
	}
	if b.ElseList != nil {
		return checkTemplate(b.ElseList)
	}
	return nil
}

func checkPipe(p *parse.PipeNode) error {
	if p == nil {
		return nil
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			switch x := a.(type) {
			case *parse.IdentifierNode:
				if !templateFuncs[x.Ident] {
					return fmt.Errorf("function %s is not supported", x.Ident)
				}
			case *parse.PipeNode:
				if err := checkPipe(x); err != nil {
					return err
				}
			case *parse.ChainNode:
				if pn, ok := x.Node.(*parse.PipeNode); ok {
					if err := checkPipe(pn); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// limitedBuilder fails writes past maxTemplateOutput.
type limitedBuilder struct{ strings.Builder }

func (b *limitedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxTemplateOutput {
		return 0, fmt.Errorf("the template renders more than %d bytes", maxTemplateOutput)
	}
	return b.Builder.Write(p)
}
