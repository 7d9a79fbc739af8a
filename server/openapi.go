package server

import (
	"strings"
)

// The types below are the part of OpenAPI 3.1 that PyStream's endpoints
// need. The document is built from the route table (routes.go), so an
// endpoint cannot be served without being described. To document a new
// endpoint, give its route an Operation; shared schemas go in
// openAPIComponents.

// openAPIVersion is the version of the OpenAPI specification the document
// follows.
const openAPIVersion = "3.1.0"

// document is an OpenAPI 3.1 document.
type document struct {
	OpenAPI    string              `json:"openapi"`
	Info       info                `json:"info"`
	Tags       []tag               `json:"tags,omitempty"`
	Paths      map[string]pathItem `json:"paths"`
	Components *components         `json:"components,omitempty"`
}

// info describes the API as a whole.
type info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// tag groups operations in the documentation page.
type tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// pathItem maps a lower-case HTTP method ("get") to its operation.
type pathItem map[string]*operation

// operation is one method on one path.
type operation struct {
	OperationID string              `json:"operationId"`
	Summary     string              `json:"summary,omitempty"`
	Description string              `json:"description,omitempty"`
	Tags        []string            `json:"tags,omitempty"`
	Parameters  []parameter         `json:"parameters,omitempty"`
	RequestBody *requestBody        `json:"requestBody,omitempty"`
	Responses   map[string]response `json:"responses"`
}

// parameter is a path, query or header parameter.
type parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"` // "path", "query" or "header"
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	Schema      *schema `json:"schema,omitempty"`
	Example     any     `json:"example,omitempty"`
}

// requestBody describes what a request carries.
type requestBody struct {
	Description string           `json:"description,omitempty"`
	Required    bool             `json:"required,omitempty"`
	Content     map[string]media `json:"content"`
}

// response describes one status code's answer.
type response struct {
	Description string           `json:"description"`
	Content     map[string]media `json:"content,omitempty"`
}

// media is a body in one content type.
type media struct {
	Schema  *schema `json:"schema,omitempty"`
	Example any     `json:"example,omitempty"`
}

// components holds schemas that operations refer to with Ref.
type components struct {
	Schemas map[string]*schema `json:"schemas,omitempty"`
}

// schema is a JSON Schema (the 2020-12 dialect OpenAPI 3.1 uses), reduced to
// the keywords PyStream needs.
type schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Minimum              *int64             `json:"minimum,omitempty"`
	Maximum              *int64             `json:"maximum,omitempty"`
	AdditionalProperties *schema            `json:"additionalProperties,omitempty"`
	AnyOf                []*schema          `json:"anyOf,omitempty"`
	Example              any                `json:"example,omitempty"`
}

// ref returns a schema that points at a component schema.
func ref(name string) *schema { return &schema{Ref: "#/components/schemas/" + name} }

// jsonContent is a JSON body with the given schema and example.
func jsonContent(sch *schema, example any) map[string]media {
	return map[string]media{"application/json": {Schema: sch, Example: example}}
}

// errorResponse documents an error answer with the standard error body.
func errorResponse(description, code, message string) response {
	return response{
		Description: description,
		Content:     jsonContent(ref("ErrorResponse"), ErrorResponse{Error: ErrorBody{Code: code, Message: message}}),
	}
}

// openAPIComponents are the schemas shared by the operations: those derived
// from the wire types (schemaSet), plus HealthResponse with its fixed
// status.
func openAPIComponents(derived map[string]*schema) *components {
	c := &components{Schemas: map[string]*schema{}}
	for name, sc := range derived {
		c.Schemas[name] = sc
	}
	c.Schemas["HealthResponse"] = &schema{
		Type:     "object",
		Required: []string{"status", "service"},
		Properties: map[string]*schema{
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
func buildOpenAPI(about info, tags []tag, routes []route, schemas *schemaSet) document {
	schemas.of(ErrorResponse{}) // every error answer has this shape
	schemas.refine()
	doc := document{
		OpenAPI:    openAPIVersion,
		Info:       about,
		Tags:       tags,
		Paths:      make(map[string]pathItem),
		Components: openAPIComponents(schemas.schemas),
	}
	for _, r := range routes {
		p := openAPIPath(r.Path)
		item := doc.Paths[p]
		if item == nil {
			item = make(pathItem)
			doc.Paths[p] = item
		}
		op := *r.Operation
		op.Responses = make(map[string]response, len(r.Operation.Responses)+1)
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
