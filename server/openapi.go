package server

import (
	"strings"
)

// The types below are the part of OpenAPI 3.1 that PyStream's endpoints
// need. The document is built from the route table (routes.go), so an
// endpoint cannot be served without being described. To document a new
// endpoint, give its route an Operation; shared schemas go in
// openAPIComponents.

// OpenAPIVersion is the version of the OpenAPI specification the document
// follows.
const OpenAPIVersion = "3.1.0"

// Document is an OpenAPI 3.1 document.
type Document struct {
	OpenAPI    string              `json:"openapi"`
	Info       Info                `json:"info"`
	Tags       []Tag               `json:"tags,omitempty"`
	Paths      map[string]PathItem `json:"paths"`
	Components *Components         `json:"components,omitempty"`
}

// Info describes the API as a whole.
type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// Tag groups operations in the documentation page.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// PathItem maps a lower-case HTTP method ("get") to its operation.
type PathItem map[string]*Operation

// Operation is one method on one path.
type Operation struct {
	OperationID string              `json:"operationId"`
	Summary     string              `json:"summary,omitempty"`
	Description string              `json:"description,omitempty"`
	Tags        []string            `json:"tags,omitempty"`
	Parameters  []Parameter         `json:"parameters,omitempty"`
	RequestBody *RequestBody        `json:"requestBody,omitempty"`
	Responses   map[string]Response `json:"responses"`
}

// Parameter is a path, query or header parameter.
type Parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"` // "path", "query" or "header"
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	Schema      *Schema `json:"schema,omitempty"`
	Example     any     `json:"example,omitempty"`
}

// RequestBody describes what a request carries.
type RequestBody struct {
	Description string               `json:"description,omitempty"`
	Required    bool                 `json:"required,omitempty"`
	Content     map[string]MediaType `json:"content"`
}

// Response describes one status code's answer.
type Response struct {
	Description string               `json:"description"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// MediaType is a body in one content type.
type MediaType struct {
	Schema  *Schema `json:"schema,omitempty"`
	Example any     `json:"example,omitempty"`
}

// Components holds schemas that operations refer to with Ref.
type Components struct {
	Schemas map[string]*Schema `json:"schemas,omitempty"`
}

// Schema is a JSON Schema (the 2020-12 dialect OpenAPI 3.1 uses), reduced to
// the keywords PyStream needs.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Minimum              *int64             `json:"minimum,omitempty"`
	Maximum              *int64             `json:"maximum,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	Example              any                `json:"example,omitempty"`
}

// ref returns a schema that points at a component schema.
func ref(name string) *Schema { return &Schema{Ref: "#/components/schemas/" + name} }

// jsonContent is a JSON body with the given schema and example.
func jsonContent(schema *Schema, example any) map[string]MediaType {
	return map[string]MediaType{"application/json": {Schema: schema, Example: example}}
}

// errorResponse documents an error answer with the standard error body.
func errorResponse(description, code, message string) Response {
	return Response{
		Description: description,
		Content:     jsonContent(ref("ErrorResponse"), ErrorResponse{Error: ErrorBody{Code: code, Message: message}}),
	}
}

// openAPIComponents are the schemas shared by the operations: those derived
// from the wire types (schemaSet), plus HealthResponse with its fixed
// status.
func openAPIComponents(derived map[string]*Schema) *Components {
	c := &Components{Schemas: map[string]*Schema{}}
	for name, sc := range derived {
		c.Schemas[name] = sc
	}
	c.Schemas["HealthResponse"] = &Schema{
		Type:     "object",
		Required: []string{"status", "service"},
		Properties: map[string]*Schema{
			"status":  {Type: "string", Enum: []any{"ok"}},
			"service": {Type: "string", Description: "The configured PYSTREAM_APP_NAME."},
		},
	}
	return c
}

// openAPIPath turns a ServeMux pattern path into an OpenAPI path:
// "{name...}" becomes "{name}" and a trailing "{$}" is dropped.
func openAPIPath(muxPath string) string {
	p := strings.TrimSuffix(muxPath, "{$}")
	return strings.ReplaceAll(p, "...}", "}")
}

// buildOpenAPI describes every route in one document. Each operation that
// does not say otherwise gets a "default" response with the standard error
// body, since every error the server writes has that shape.
func buildOpenAPI(info Info, tags []Tag, routes []route, schemas *schemaSet) Document {
	schemas.of(ErrorResponse{}) // every error answer has this shape
	schemas.refine()
	doc := Document{
		OpenAPI:    OpenAPIVersion,
		Info:       info,
		Tags:       tags,
		Paths:      make(map[string]PathItem),
		Components: openAPIComponents(schemas.schemas),
	}
	for _, r := range routes {
		p := openAPIPath(r.Path)
		item := doc.Paths[p]
		if item == nil {
			item = make(PathItem)
			doc.Paths[p] = item
		}
		op := *r.Operation
		op.Responses = make(map[string]Response, len(r.Operation.Responses)+1)
		for code, resp := range r.Operation.Responses {
			op.Responses[code] = resp
		}
		if _, ok := op.Responses["default"]; !ok {
			op.Responses["default"] = errorResponse("Any other answer is an error in the standard shape.",
				CodeMethodNotAllowed, "method POST is not allowed on "+openAPIPath(r.Path)+"; allowed: GET, HEAD")
		}
		item[strings.ToLower(r.Method)] = &op
	}
	return doc
}
