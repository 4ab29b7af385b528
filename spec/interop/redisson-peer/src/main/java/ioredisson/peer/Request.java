package ioredisson.peer;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One command: {@code {"id":7,"op":"tryLock","kind":"lock","name":"order:42","thread":3,...}}.
 * {@code kind} defaults to {@code peer} and {@code thread} to 0; other fields are the op's arguments.
 */
record Request(long id, String op, String kind, int thread, JsonNode body) {

  static Request parse(JsonNode body) {
    if (!body.path("id").canConvertToLong()) throw new IllegalArgumentException("missing numeric id");
    if (!body.path("op").isTextual()) throw new IllegalArgumentException("missing op");
    return new Request(
        body.get("id").asLong(),
        body.get("op").asText(),
        body.path("kind").asText("peer"),
        body.path("thread").asInt(0),
        body);
  }

  /** The object's name, required by every kind but {@code peer}. */
  String name() {
    return text("name");
  }

  String text(String field) {
    JsonNode value = body.get(field);
    if (value == null || !value.isTextual()) throw new IllegalArgumentException("missing string field " + field);
    return value.asText();
  }

  long longArg(String field, long fallback) {
    JsonNode value = body.get(field);
    if (value == null || value.isNull()) return fallback;
    if (!value.canConvertToLong()) throw new IllegalArgumentException(field + " must be an integer");
    return value.asLong();
  }

  long requiredLong(String field) {
    if (!body.has(field)) throw new IllegalArgumentException("missing integer field " + field);
    return longArg(field, 0);
  }
}
