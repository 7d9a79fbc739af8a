package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	// Security is the bearer token requirement of a route with a role
	// (set by buildOpenAPI from the route table); an open route has none,
	// and the document no global one. Role names the role the token needs.
	Security []map[string][]string `json:"security,omitempty"`
	Role     string                `json:"x-pystream-role,omitempty"`
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

// components holds schemas that operations refer to with Ref, and the
// bearer token scheme.
type components struct {
	Schemas         map[string]*schema        `json:"schemas,omitempty"`
	SecuritySchemes map[string]securityScheme `json:"securitySchemes,omitempty"`
}

// securityScheme is an OpenAPI security scheme; PyStream has one, bearer
// tokens (docs/security.md).
type securityScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme"`
	Description string `json:"description,omitempty"`
}

// bearerScheme names the bearer token scheme in the document.
const bearerScheme = "bearerToken"

// schema is a JSON Schema (the 2020-12 dialect OpenAPI 3.1 uses), reduced to
// the keywords PyStream needs. Minimum and Maximum are decimal numbers
// (json.Number) so that a uint64 bound such as 18446744073709551615 is
// written exactly. AdditionalProperties is nil (any property allowed) or
// false (closed: the server refuses unknown fields); PyStream has no maps.
type schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Minimum              json.Number        `json:"minimum,omitempty"`
	Maximum              json.Number        `json:"maximum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	AnyOf                []*schema          `json:"anyOf,omitempty"`
	Example              any                `json:"example,omitempty"`
}

// num is a schema bound: an integer written in decimal.
func num[T int | int64 | uint64](v T) json.Number { return json.Number(fmt.Sprint(v)) }

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
// body, since every error the server writes has that shape. Two things are
// derived rather than written per route:
//
//   - every GET route also answers HEAD (ServeMux serves HEAD wherever it
//     serves GET, as RFC 9110 § 9.3.2 asks of a server), so each GET gets a
//     HEAD operation of its own (headOperation);
//   - every schema a JSON request body uses is closed
//     (additionalProperties: false), since readJSON refuses unknown fields.
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
	doc.Components.SecuritySchemes = map[string]securityScheme{bearerScheme: {Type: "http", Scheme: "bearer",
		Description: "A token of PYSTREAM_AUTH_FILE with the route's role (x-pystream-role: read, write or admin; " +
			"admin can do all that write can, write all that read can), and topic prefixes when the token has them. " +
			"A server without an auth file (bound to loopback only) needs none."}}
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
		if r.Role != RoleOpen { // open routes name no security: the document has no global requirement

			op.Security, op.Role = []map[string][]string{{bearerScheme: {}}}, r.Role.String()
			op.Responses["401"] = errorResponse("No valid bearer token (a server with PYSTREAM_AUTH_FILE).", CodeUnauthenticated,
				fmt.Sprintf("%s %s needs a token with role %s: send Authorization: Bearer <token> (the CLI reads PYSTREAM_TOKEN or --token)",
					r.Method, r.Path, r.Role))
			denied := fmt.Sprintf("token \"reader\" has role read; %s %s needs %s", r.Method, r.Path, r.Role)
			if r.Role == RoleRead {
				denied = "token \"billing\" may not reach this topic: it is limited to topics starting with billing-"
			}
			op.Responses["403"] = errorResponse("The token's role, or its topic prefixes, do not allow this request.", CodePermissionDenied, denied)
		}
		if _, ok := op.Responses["503"]; !ok && needsMetadata(r) {
			op.Responses["503"] = notReadyResponse()
		}
		if _, ok := op.Responses["default"]; !ok {
			op.Responses["default"] = errorResponse("Any other answer is an error in the standard shape.",
				CodeMethodNotAllowed, "method POST is not allowed on "+openAPIPath(r.Path)+"; allowed: GET, HEAD")
		}
		item[strings.ToLower(r.Method)] = &op
		if r.Method == http.MethodGet {
			item["head"] = headOperation(&op, p)
		}
		if rb := op.RequestBody; rb != nil {
			if m, ok := rb.Content[mediaJSON]; ok {
				closeSchema(doc.Components.Schemas, m.Schema, map[string]bool{})
			}
		}
	}
	return doc
}

// headOperationID names the HEAD twin of a GET operation: "get" becomes
// "head" (getTopic: headTopic), any other verb gets "head" in front
// (listTopics: headListTopics).
func headOperationID(getID string) string {
	if rest, ok := strings.CutPrefix(getID, "get"); ok && rest != "" {
		return "head" + rest
	}
	return "head" + strings.ToUpper(getID[:1]) + getID[1:]
}

// headOperation is the HEAD twin of the GET operation get on path: the
// same parameters and statuses, headers only.
func headOperation(get *operation, path string) *operation {
	head := &operation{
		OperationID: headOperationID(get.OperationID),
		Summary:     "Headers of: " + get.Summary,
		Description: "GET " + path + " without the body: the same status and headers (Content-Type, Content-Length when known). " +
			"Served because every GET is (RFC 9110 § 9.3.2).",
		Tags:       get.Tags,
		Parameters: get.Parameters,
		Responses:  make(map[string]response, len(get.Responses)),
	}
	for code, resp := range get.Responses {
		head.Responses[code] = response{Description: resp.Description}
	}
	return head
}

// closeSchema sets additionalProperties: false on every object schema sc
// reaches, following $ref into components. seen stops at schemas already
// closed.
func closeSchema(components map[string]*schema, sc *schema, seen map[string]bool) {
	if sc == nil {
		return
	}
	if name, ok := strings.CutPrefix(sc.Ref, "#/components/schemas/"); ok {
		if seen[name] {
			return
		}
		seen[name] = true
		closeSchema(components, components[name], seen)
		return
	}
	if sc.Type == "object" {
		sc.AdditionalProperties = ptr(false)
	}
	for _, p := range sc.Properties {
		closeSchema(components, p, seen)
	}
	closeSchema(components, sc.Items, seen)
	for _, alt := range sc.AnyOf {
		closeSchema(components, alt, seen)
	}
}
