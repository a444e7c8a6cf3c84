package icefloe.jvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.rest.BaseHTTPClient;
import org.apache.iceberg.rest.ErrorHandler;
import org.apache.iceberg.rest.HTTPHeaders;
import org.apache.iceberg.rest.HTTPRequest;
import org.apache.iceberg.rest.HTTPRequest.HTTPMethod;
import org.apache.iceberg.rest.ImmutableHTTPRequest;
import org.apache.iceberg.rest.ParserContext;
import org.apache.iceberg.rest.RESTClient;
import org.apache.iceberg.rest.RESTResponse;
import org.apache.iceberg.rest.auth.AuthSession;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectReader;

/**
 * The transport under Iceberg's {@code RESTCatalog}, on the JDK's own HTTP client.
 *
 * <p>The runtime jar the tests use ships Iceberg's REST catalog (request and response models, their
 * JSON, error handlers, auth sessions, the catalog's logic) but not the Apache HttpClient 5 its
 * default transport is built on. This class carries the same requests over {@code java.net.http}:
 * Iceberg builds each request (path, query, headers, body encoding, authentication) and parses each
 * response and error; only the bytes on the wire travel through the JDK instead.
 */
public class JdkHttpRestClient extends BaseHTTPClient {
  // Headers the JDK client sets itself and refuses to take from a caller.
  private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade");

  private final HttpClient http;
  private final URI baseUri;
  private final Map<String, String> baseHeaders;
  // Iceberg's REST object mapper (its class is package-private): the one a request uses by default.
  private final ObjectMapper mapper = ImmutableHTTPRequest.builder()
      .baseUri(URI.create("http://localhost")).method(HTTPMethod.GET).path("config").build().mapper();
  private final AuthSession session;

  public JdkHttpRestClient(Map<String, String> properties) {
    this(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build(),
        URI.create(stripSlash(required(properties, "uri"))), headers(properties), AuthSession.EMPTY);
  }

  private JdkHttpRestClient(HttpClient http, URI baseUri, Map<String, String> baseHeaders, AuthSession session) {
    this.http = http;
    this.baseUri = baseUri;
    this.baseHeaders = baseHeaders;
    this.session = session;
  }

  private static String required(Map<String, String> properties, String name) {
    String value = properties.get(name);
    if (value == null) {
      throw new IllegalArgumentException("REST catalog property '" + name + "' is required");
    }
    return value;
  }

  private static String stripSlash(String uri) {
    return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
  }

  // Iceberg's "header.<name>" catalog properties become headers of every request.
  private static Map<String, String> headers(Map<String, String> properties) {
    Map<String, String> found = new LinkedHashMap<>();
    properties.forEach((k, v) -> {
      if (k.startsWith("header.")) {
        found.put(k.substring("header.".length()), v);
      }
    });
    return found;
  }

  @Override
  public RESTClient withAuthSession(AuthSession newSession) {
    return new JdkHttpRestClient(http, baseUri, baseHeaders, newSession);
  }

  @Override
  protected HTTPRequest buildRequest(
      HTTPMethod method, String path, Map<String, String> queryParams, Map<String, String> headers, Object body) {
    Map<String, String> all = new LinkedHashMap<>();
    if (headers != null) {
      all.putAll(headers);
    }
    all.putIfAbsent("Accept", "application/json");
    all.putIfAbsent("Content-Type", body instanceof Map ? "application/x-www-form-urlencoded" : "application/json");
    baseHeaders.forEach(all::putIfAbsent);
    HTTPRequest request = ImmutableHTTPRequest.builder()
        .baseUri(baseUri)
        .mapper(mapper)
        .method(method)
        .path(path)
        .body(body)
        .queryParameters(queryParams == null ? Map.of() : queryParams)
        .headers(HTTPHeaders.of(all))
        .build();
    return session.authenticate(request);
  }

  @Override
  protected <T extends RESTResponse> T execute(
      HTTPRequest request, Class<T> responseType, Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders) {
    return execute(request, responseType, errorHandler, responseHeaders, null);
  }

  @Override
  protected <T extends RESTResponse> T execute(
      HTTPRequest request, Class<T> responseType, Consumer<ErrorResponse> errorHandler,
      Consumer<Map<String, String>> responseHeaders, ParserContext parserContext) {
    String body = request.encodedBody();
    HttpRequest.Builder builder = HttpRequest.newBuilder(request.requestUri())
        .method(request.method().name(),
            body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    request.headers().entries().forEach(h -> {
      if (!RESTRICTED.contains(h.name().toLowerCase())) {
        builder.header(h.name(), h.value());
      }
    });
    HttpResponse<String> response;
    try {
      response = http.send(builder.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new RESTException(e, "Error occurred while processing %s request", request.method());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RESTException(e, "Interrupted while processing %s request", request.method());
    }
    Map<String, String> received = new HashMap<>();
    response.headers().map().forEach((name, values) -> {
      List<String> v = values;
      if (!v.isEmpty()) {
        received.put(name, v.get(0));
      }
    });
    responseHeaders.accept(received);
    int code = response.statusCode();
    boolean ok = code == 200 || code == 202 || code == 204 || code == 304;
    if (code == 204 || code == 304 || (responseType == null && ok)) {
      if (code == 304 && !request.headers().contains("If-None-Match")) {
        throw new RESTException("Invalid (NOT_MODIFIED) response for request: method=%s, path=%s",
            request.method(), request.path());
      }
      return null;
    }
    if (!ok) {
      throw failure(code, response.body(), errorHandler);
    }
    String text = response.body();
    if (text == null || text.isEmpty()) {
      throw new RESTException("Invalid (empty) response body for request (expected %s): method=%s, path=%s, status=%d",
          responseType.getSimpleName(), request.method(), request.path(), code);
    }
    ObjectReader reader = mapper.readerFor(responseType);
    if (parserContext != null && !parserContext.isEmpty()) {
      reader = reader.with(parserContext.toInjectableValues());
    }
    try {
      return reader.readValue(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  // The error as Iceberg's handler reads it; the handler throws the matching exception
  // (NoSuchTableException, CommitFailedException, ...), else a RESTException names the response.
  private static RuntimeException failure(int code, String text, Consumer<ErrorResponse> errorHandler) {
    ErrorResponse error = null;
    if (text != null && !text.isEmpty() && errorHandler instanceof ErrorHandler) {
      try {
        error = ((ErrorHandler) errorHandler).parseResponse(code, text);
      } catch (UncheckedIOException | IllegalArgumentException e) {
        error = null;
      }
    }
    if (error == null) {
      error = ErrorResponse.builder().responseCode(code)
          .withMessage(text == null || text.isEmpty() ? "HTTP " + code : text).withType("RESTException").build();
    }
    errorHandler.accept(error);
    return new RESTException("Unhandled error: %s", error);
  }

  @Override
  public void close() {
    // The JDK client holds no resources that need closing before Java 21.
  }
}
