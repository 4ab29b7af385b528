package ioredisson.peer;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The values of a group multi-lock request ({@code "values":["a",7,{"long":"5"}]}): a JSON string is a
 * String, a JSON integer an Integer, {@code {"long":"<digits>"}} a Long.
 */
final class GroupValues {
  private GroupValues() {}

  static List<Object> of(Request request) {
    JsonNode values = request.body().get("values");
    if (values == null || !values.isArray()) throw new IllegalArgumentException("missing array field values");
    List<Object> out = new ArrayList<>();
    for (JsonNode value : values) {
      if (value.isTextual()) out.add(value.asText());
      else if (value.isInt()) out.add(value.asInt());
      else if (value.isObject() && value.path("long").isTextual()) out.add(Long.parseLong(value.get("long").asText()));
      else throw new IllegalArgumentException("a value must be a string, an int or {\"long\": \"<digits>\"}: " + value);
    }
    return out;
  }
}
