package icefloe.rck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * The Java RESTCatalog pointed at the icefloe server under test. The server and what it supports are
 * given as system properties by tools/rck.py: icefloe.rck.uri, and icefloe.rck.&lt;capability&gt; for
 * each capability switch of Iceberg's catalog test suites.
 */
final class RckClient {
  private RckClient() {}

  static RESTCatalog open(Map<String, String> extra) {
    String uri = System.getProperty("icefloe.rck.uri");
    if (uri == null || uri.isEmpty()) {
      throw new IllegalStateException("system property icefloe.rck.uri (the server's URI) is not set");
    }
    Map<String, String> properties = new HashMap<>();
    properties.put(CatalogProperties.URI, uri);
    properties.putAll(extra);
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize("icefloe", properties);
    return catalog;
  }

  static boolean capability(String name, boolean fallback) {
    String value = System.getProperty("icefloe.rck." + name);
    return value == null ? fallback : Boolean.parseBoolean(value);
  }

  /** Every namespace of the server, deepest first, so that each one is empty when its turn comes. */
  private static List<Namespace> allNamespaces(RESTCatalog catalog) {
    List<Namespace> found = new ArrayList<>();
    List<Namespace> pending = new ArrayList<>(catalog.listNamespaces());
    while (!pending.isEmpty()) {
      Namespace next = pending.remove(pending.size() - 1);
      found.add(next);
      if (next.levels().length < 8) {
        pending.addAll(catalog.listNamespaces(next));
      }
    }
    found.sort(Comparator.comparingInt((Namespace n) -> n.levels().length).reversed());
    return found;
  }

  /** Each test starts from an empty server: the tables, views and namespaces of the last are dropped. */
  static void empty(RESTCatalog catalog) {
    for (Namespace namespace : allNamespaces(catalog)) {
      catalog.listTables(namespace).forEach(catalog::dropTable);
      catalog.listViews(namespace).forEach(catalog::dropView);
      catalog.dropNamespace(namespace);
    }
  }

  static void close(RESTCatalog catalog) {
    try {
      catalog.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
