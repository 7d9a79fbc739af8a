package server

import (
	"reflect"
	"strings"
)

// schemaSet derives JSON Schemas from the wire types of package apiclient by
// reflection, so the OpenAPI document describes exactly the structs the
// server encodes and the client decodes. Named struct types become
// components ("#/components/schemas/TopicDetail"); a field's JSON tag gives
// its name, omitempty makes it optional, a pointer makes it nullable, and
// []byte is a base64 string.
type schemaSet struct {
	schemas map[string]*Schema
}

func newSchemaSet() *schemaSet { return &schemaSet{schemas: map[string]*Schema{}} }

// of returns the schema of v's type, a $ref for a named struct.
func (s *schemaSet) of(v any) *Schema { return s.schema(reflect.TypeOf(v)) }

func (s *schemaSet) schema(t reflect.Type) *Schema {
	switch t.Kind() {
	case reflect.Pointer:
		return &Schema{AnyOf: []*Schema{s.schema(t.Elem()), {Type: "null"}}}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", Format: "byte", Description: "standard base64 (RFC 4648, with padding)"}
		}
		return &Schema{Type: "array", Items: s.schema(t.Elem())}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return &Schema{Type: "integer", Format: "int64"}
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		zero := int64(0)
		return &Schema{Type: "integer", Format: "uint64", Minimum: &zero}
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
	return &Schema{}
}

func (s *schemaSet) object(t reflect.Type) *Schema {
	obj := &Schema{Type: "object", Properties: map[string]*Schema{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
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
