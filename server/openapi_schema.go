package server

import (
	"reflect"
	"slices"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
)

// schemaSet derives JSON Schemas from the wire types of package apiclient by
// reflection, so the OpenAPI document describes exactly the structs the
// server encodes and the client decodes. Named struct types become
// components ("#/components/schemas/TopicDetail"); a field's JSON tag gives
// its name, omitempty makes it optional, a pointer makes it nullable, and
// []byte is a base64 string.
type schemaSet struct {
	schemas map[string]*schema
}

func newSchemaSet() *schemaSet { return &schemaSet{schemas: map[string]*schema{}} }

// of returns the schema of v's type, a $ref for a named struct.
func (s *schemaSet) of(v any) *schema { return s.schema(reflect.TypeOf(v)) }

func (s *schemaSet) schema(t reflect.Type) *schema {
	switch t.Kind() {
	case reflect.Pointer:
		return &schema{AnyOf: []*schema{s.schema(t.Elem()), {Type: "null"}}}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &schema{Type: "string", Format: "byte", Description: "standard base64 (RFC 4648, with padding)"}
		}
		return &schema{Type: "array", Items: s.schema(t.Elem())}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return &schema{Type: "integer", Format: "int64"}
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		zero := int64(0)
		return &schema{Type: "integer", Format: "uint64", Minimum: &zero}
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t)
		}
		if _, ok := s.schemas[t.Name()]; !ok {
			s.schemas[t.Name()] = nil // reserve: recursive types end here
			s.schemas[t.Name()] = s.object(t)
		}
		return ref(t.Name())
	}
	return &schema{}
}

func (s *schemaSet) object(t reflect.Type) *schema {
	obj := &schema{Type: "object", Properties: map[string]*schema{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		jsonTag := f.Tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(jsonTag, ",")
		if name == "" {
			name = f.Name
		}
		obj.Properties[name] = s.schema(f.Type)
		if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
			obj.Required = append(obj.Required, name)
		}
	}
	return obj
}

// refine corrects the derived schemas where the Go type of a wire struct
// says less than the contract (docs/phase-6-network-api.md):
//
//   - ProduceRecord.key may be omitted or null (no key: round robin), which
//     a plain []byte field cannot express;
//   - ProduceResult is a placement: every field set, never "error";
//   - a failed produce answers, per input record, either a placement or
//     {"error": {"code", "message"}} alone (ProduceFailure), so
//     ErrorBody.records lists either.
//
// It only touches schemas that were derived; call it after every wire type
// the document uses has been derived.
func (s *schemaSet) refine() {
	if rec := s.schemas["ProduceRecord"]; rec != nil {
		rec.Properties["key"] = &schema{AnyOf: []*schema{rec.Properties["key"], {Type: "null"}},
			Description: "omitted or null: no key, the server picks the partition round robin; \"\" is a real, empty key"}
		rec.Required = slices.DeleteFunc(rec.Required, func(n string) bool { return n == "key" })
	}
	if res := s.schemas["ProduceResult"]; res != nil {
		delete(res.Properties, "error")
	}
	if body := s.schemas["ErrorBody"]; body != nil && body.Properties["records"] != nil {
		s.of(apiclient.RecordError{})
		s.schemas["ProduceFailure"] = &schema{Type: "object", Required: []string{"error"},
			Description: "A record of a failed produce that was not acknowledged.",
			Properties:  map[string]*schema{"error": ref("RecordError")}}
		body.Properties["records"] = &schema{Type: "array",
			Description: "Failed produce only: per input record, in request order, its placement (acknowledged) or its error.",
			Items:       &schema{AnyOf: []*schema{ref("ProduceResult"), ref("ProduceFailure")}}}
	}
}
