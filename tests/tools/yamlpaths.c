/*
 * yamlpaths FILE: every scalar of every YAML document of FILE, read with libyaml, as one
 * line "DOC KIND PATH=VALUE": DOC counts documents from 0, KIND is the document's top-level
 * `kind`, PATH joins mapping keys with '.' and sequence indexes as [N].  tests/deploy.bats
 * checks the Kubernetes manifests with it, through a real YAML parser rather than grep.
 * Exits 1 with one line when the file cannot be read or parsed.
 */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

static const char *
scalar(yaml_document_t *d, yaml_node_t *n)
{
	(void)d;
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static void
walk(yaml_document_t *d, yaml_node_t *n, char *path, size_t len, int doc, const char *kind)
{
	if (!n)
		return;
	if (n->type == YAML_SCALAR_NODE) {
		printf("%d %s %s=%s\n", doc, kind, len ? path : ".", n->data.scalar.value);
		return;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		int i = 0;
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++, i++) {
			int w = snprintf(path + len, 4096 - len, "[%d]", i);
			walk(d, yaml_document_get_node(d, *it), path, len + (size_t)w, doc, kind);
		}
		path[len] = 0;
		return;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(d, yaml_document_get_node(d, p->key));
		int w = snprintf(path + len, 4096 - len, "%s%s", len ? "." : "", k ? k : "?");
		walk(d, yaml_document_get_node(d, p->value), path, len + (size_t)w, doc, kind);
	}
	path[len] = 0;
}

static const char *
kind_of(yaml_document_t *d, yaml_node_t *root)
{
	if (!root || root->type != YAML_MAPPING_NODE)
		return "-";
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(d, yaml_document_get_node(d, p->key));
		const char *v = scalar(d, yaml_document_get_node(d, p->value));
		if (k && v && !strcmp(k, "kind"))
			return v;
	}
	return "-";
}

int
main(int argc, char **argv)
{
	static char path[4096 + 64];
	yaml_parser_t parser;
	if (argc != 2) {
		fprintf(stderr, "usage: yamlpaths FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	for (int doc = 0;; doc++) {
		yaml_document_t d;
		if (!yaml_parser_load(&parser, &d)) {
			fprintf(stderr, "yamlpaths: %s:%zu: %s\n", argv[1],
				parser.problem_mark.line + 1,
				parser.problem ? parser.problem : "parse error");
			return 1;
		}
		yaml_node_t *root = yaml_document_get_root_node(&d);
		if (!root) {
			yaml_document_delete(&d);
			break;
		}
		path[0] = 0;
		walk(&d, root, path, 0, doc, kind_of(&d, root));
		yaml_document_delete(&d);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	return 0;
}
