// Apache Paimon's Java engine (paimon-bundle, its table API, no Spark) driven by JSON requests.
//
// Started by tools/paimon_java.py in a JVM of its own. The argument is a JSON object with the
// warehouse; the program answers {"ready": true, "version": ...}, then reads one JSON request a line
// on stdin and answers one JSON line on stdout: {"result": ...} or {"error": ...}. Every request names
// an "op" (see dispatch); tables are "db.name", with Paimon's suffixes for system tables
// ("db.t$snapshots") and branches ("db.t$branch_b").

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.paimon.CoreOptions;

import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.operation.CleanOrphanFilesResult;
import org.apache.paimon.operation.LocalOrphanFilesClean;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReaderIterator;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.RowKeyExtractor;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DataTypeRoot;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

public final class PaimonReferee {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private final Catalog catalog;
    // spill and lookup files (the lookup changelog producer, deletion vectors need a local directory)
    private static final IOManager IO = IOManager.create(System.getProperty("java.io.tmpdir"));

    private PaimonReferee(String warehouse) throws Exception {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");   // the other engine commits to the same tables
        catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);   // nothing the engine prints may break the protocol
        JsonNode config = JSON.readTree(args[0]);
        PaimonReferee referee = new PaimonReferee(config.get("warehouse").asText());
        ObjectNode ready = NODES.objectNode();
        ready.put("ready", true);
        ready.put("version", String.valueOf(Catalog.class.getPackage().getImplementationVersion()));
        out.println(JSON.writeValueAsString(ready));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            JsonNode request = JSON.readTree(line);
            if (request.path("stop").asBoolean(false)) {
                break;
            }
            ObjectNode reply = NODES.objectNode();
            long started = System.nanoTime();
            try {
                reply.set("result", referee.dispatch(request));
                reply.put("seconds", (System.nanoTime() - started) / 1e9);
            } catch (Throwable e) {   // every failure goes back to the caller
                StringBuilder text = new StringBuilder(e.toString());
                for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                    text.append("\ncaused by: ").append(c);
                }
                StackTraceElement[] trace = e.getStackTrace();
                for (int i = 0; i < Math.min(6, trace.length); i++) {
                    text.append("\n  at ").append(trace[i]);
                }
                reply.put("error", text.toString());
            }
            out.println(JSON.writeValueAsString(reply));
        }
        referee.catalog.close();
    }

    private JsonNode dispatch(JsonNode r) throws Exception {
        String op = r.path("op").asText();
        switch (op) {
            case "create_database":
                catalog.createDatabase(r.get("database").asText(), true);
                return NODES.nullNode();
            case "create_table":
                return createTable(r);
            case "drop_table":
                catalog.dropTable(Identifier.fromString(r.get("table").asText()), true);
                return NODES.nullNode();
            case "alter":
                return alter(r);
            case "rows":
                return rows(table(r), strings(r.get("columns")), r.path("kind").asBoolean(false));
            case "write":
                return write(r);
            case "write_columns":
                return writeColumns(r);
            case "compact":
                return compact(r);
            case "stream":
                return stream(r);
            case "rollback":
                return rollback(r);
            case "create_tag":
                fileTable(r).createTag(r.get("tag").asText(), r.get("snapshot").asLong());
                return NODES.nullNode();
            case "delete_tag":
                fileTable(r).deleteTag(r.get("tag").asText());
                return NODES.nullNode();
            case "create_branch":
                if (r.hasNonNull("tag")) {
                    fileTable(r).createBranch(r.get("branch").asText(), r.get("tag").asText());
                } else {
                    fileTable(r).createBranch(r.get("branch").asText());
                }
                return NODES.nullNode();
            case "expire":
                return expire(r);
            case "remove_orphan_files":
                return removeOrphanFiles(r);
            case "indexed_read":
                return indexedRead(r);
            case "global_index_rows":
                return globalIndexRows(r);
            case "build_global_index":
                return buildGlobalIndex(r);
            case "plan":
                return plan(r);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    // ------------------------------------------------------------------ tables and schemas
    private Table table(JsonNode r) throws Exception {
        Table table = catalog.getTable(Identifier.fromString(r.get("table").asText()));
        Map<String, String> options = stringMap(r.get("options"));
        return options.isEmpty() ? table : table.copy(options);
    }

    private FileStoreTable fileTable(JsonNode r) throws Exception {
        Table table = table(r);
        if (!(table instanceof FileStoreTable)) {
            throw new IllegalArgumentException(r.get("table").asText() + " is not a data table");
        }
        return (FileStoreTable) table;
    }

    private static Map<String, String> stringMap(JsonNode node) {
        Map<String, String> map = new HashMap<>();
        if (node != null && !node.isNull()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                map.put(e.getKey(), e.getValue().asText());
            }
        }
        return map;
    }

    private static List<String> strings(JsonNode node) {
        List<String> list = new ArrayList<>();
        if (node != null) {
            node.forEach(n -> list.add(n.asText()));
        }
        return list;
    }

    private JsonNode createTable(JsonNode r) throws Exception {
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode column : r.get("columns")) {
            schema.column(column.get(0).asText(), DataTypeJsonParser.parseAtomicTypeSQLString(column.get(1).asText()));
        }
        schema.partitionKeys(strings(r.get("partition_keys")));
        schema.primaryKey(strings(r.get("primary_keys")));
        schema.options(stringMap(r.get("options")));
        catalog.createTable(Identifier.fromString(r.get("table").asText()), schema.build(), false);
        return NODES.nullNode();
    }

    private JsonNode alter(JsonNode r) throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode c : r.get("changes")) {
            String kind = c.get(0).asText();
            switch (kind) {
                case "add_column":
                    changes.add(SchemaChange.addColumn(c.get(1).asText(),
                            DataTypeJsonParser.parseAtomicTypeSQLString(c.get(2).asText())));
                    break;
                case "rename_column":
                    changes.add(SchemaChange.renameColumn(c.get(1).asText(), c.get(2).asText()));
                    break;
                case "drop_column":
                    changes.add(SchemaChange.dropColumn(c.get(1).asText()));
                    break;
                case "set_option":
                    changes.add(SchemaChange.setOption(c.get(1).asText(), c.get(2).asText()));
                    break;
                default:
                    throw new IllegalArgumentException("unknown schema change " + kind);
            }
        }
        catalog.alterTable(Identifier.fromString(r.get("table").asText()), changes, false);
        return NODES.nullNode();
    }

    // ------------------------------------------------------------------ reads
    /** A batch read of the table, of the named columns only when some are named. */
    private static JsonNode rows(Table table, List<String> columns, boolean withKind) throws Exception {
        ReadBuilder read = table.newReadBuilder();
        RowType type = table.rowType();
        if (!columns.isEmpty()) {
            int[] projection = new int[columns.size()];
            for (int i = 0; i < projection.length; i++) {
                projection[i] = type.getFieldIndex(columns.get(i));
                if (projection[i] < 0) {
                    throw new IllegalArgumentException(table.name() + " has no column " + columns.get(i)
                            + " (its columns: " + type.getFieldNames() + ")");
                }
            }
            read.withProjection(projection);
            type = type.project(projection);
        }
        return readSplits(read.newRead().withIOManager(IO), read.newScan().plan().splits(), type, withKind,
                NODES.arrayNode());
    }

    /**
     * A batch read filtered by {@code column IN (values)}, as Paimon plans and reads it: the data files its
     * scan keeps (embedded file indexes and statistics skip files there) and the rows of the files its
     * reader does not skip (a file's {@code .index} file skips it there). Rows are not filtered one by one.
     */
    private JsonNode indexedRead(JsonNode r) throws Exception {
        Table table = table(r);
        RowType type = table.rowType();
        String column = r.get("column").asText();
        int index = type.getFieldIndex(column);
        if (index < 0) {
            throw new IllegalArgumentException(table.name() + " has no column " + column);
        }
        List<Object> literals = new ArrayList<>();
        for (JsonNode v : r.get("values")) {
            literals.add(fromJson(v, type.getTypeAt(index)));
        }
        org.apache.paimon.predicate.Predicate filter =
                new org.apache.paimon.predicate.PredicateBuilder(type).in(index, literals);
        ReadBuilder read = table.newReadBuilder().withFilter(filter);
        List<Split> splits = read.newScan().plan().splits();
        int files = 0;
        for (Split split : splits) {
            files += ((DataSplit) split).dataFiles().size();
        }
        ObjectNode out = NODES.objectNode();
        out.put("files", files);
        out.set("rows", readSplits(read.newRead().withIOManager(IO), splits, type, false, NODES.arrayNode()));
        return out;
    }

    // ------------------------------------------------------------------ planning
    // A scan's plan timed alone: the table loaded anew, then newScan().plan() with the AND of
    // "conditions" ([column, "=" | ">=" | "<", value]); the data files of its splits, the seconds
    // the plan took and the JVM's peak resident set (VmHWM) so far, in MB.
    private JsonNode plan(JsonNode r) throws Exception {
        Table table = table(r);
        RowType type = table.rowType();
        org.apache.paimon.predicate.PredicateBuilder pb = new org.apache.paimon.predicate.PredicateBuilder(type);
        List<org.apache.paimon.predicate.Predicate> conditions = new ArrayList<>();
        for (JsonNode c : r.path("conditions")) {
            int index = type.getFieldIndex(c.get(0).asText());
            if (index < 0) {
                throw new IllegalArgumentException(table.name() + " has no column " + c.get(0).asText());
            }
            Object literal = fromJson(c.get(2), type.getTypeAt(index));
            switch (c.get(1).asText()) {
                case "=": conditions.add(pb.equal(index, literal)); break;
                case ">=": conditions.add(pb.greaterOrEqual(index, literal)); break;
                case "<": conditions.add(pb.lessThan(index, literal)); break;
                default: throw new IllegalArgumentException("unknown comparison " + c.get(1).asText());
            }
        }
        ReadBuilder read = table.newReadBuilder();
        if (!conditions.isEmpty()) {
            read = read.withFilter(org.apache.paimon.predicate.PredicateBuilder.and(conditions));
        }
        long started = System.nanoTime();
        List<Split> splits = read.newScan().plan().splits();
        int files = 0;
        for (Split split : splits) {
            files += ((DataSplit) split).dataFiles().size();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        ObjectNode out = NODES.objectNode();
        out.put("files", files);
        out.put("seconds", seconds);
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                out.put("peak_rss_mb", Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ global indexes
    // The row ids Paimon's global index scanner finds for "column IN values" (null: no index answers).
    private JsonNode globalIndexRows(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        RowType type = table.rowType();
        int index = type.getFieldIndex(r.get("column").asText());
        if (index < 0) {
            throw new IllegalArgumentException(table.name() + " has no column " + r.get("column").asText());
        }
        List<Object> literals = new ArrayList<>();
        for (JsonNode v : r.get("values")) {
            literals.add(fromJson(v, type.getTypeAt(index)));
        }
        org.apache.paimon.predicate.Predicate filter =
                new org.apache.paimon.predicate.PredicateBuilder(type).in(index, literals);
        java.util.Optional<org.apache.paimon.globalindex.GlobalIndexScanner> scanner =
                org.apache.paimon.globalindex.GlobalIndexScanner.create(table, null, filter);
        if (!scanner.isPresent()) {
            return NODES.nullNode();
        }
        try (org.apache.paimon.globalindex.GlobalIndexScanner s = scanner.get()) {
            java.util.Optional<org.apache.paimon.globalindex.GlobalIndexResult> result = s.scan(filter);
            if (!result.isPresent()) {
                return NODES.nullNode();
            }
            ArrayNode ids = NODES.arrayNode();
            for (long id : result.get().results()) {
                ids.add(id);
            }
            return ids;
        }
    }

    // A bitmap or btree global index of one column of an unpartitioned row-tracking table, built and committed
    // by Paimon's own writer over all rows (one row range, from row id 0), as its Spark procedure builds one.
    private JsonNode buildGlobalIndex(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        org.apache.paimon.types.DataField field = table.rowType().getField(r.get("column").asText());
        RowType readType = org.apache.paimon.table.SpecialFields.rowTypeWithRowId(
                table.rowType().project(java.util.Collections.singletonList(field.name())));
        ReadBuilder read = table.newReadBuilder().withReadType(readType);
        java.util.TreeMap<Long, Object> values = new java.util.TreeMap<>();
        InternalRow.FieldGetter getter = InternalRow.createFieldGetter(field.type(), 0);
        try (RecordReaderIterator<InternalRow> it =
                new RecordReaderIterator<>(read.newRead().createReader(read.newScan().plan().splits()))) {
            while (it.hasNext()) {
                InternalRow row = it.next();
                values.put(row.getLong(1), getter.getFieldOrNull(row));
            }
        }
        if (values.isEmpty() || values.firstKey() != 0 || values.lastKey() != values.size() - 1) {
            throw new IllegalArgumentException("row ids are not 0.." + (values.size() - 1) + ": " + values.keySet());
        }
        String indexType = r.path("index_type").asText("bitmap");
        org.apache.paimon.globalindex.GlobalIndexWriter created =
                org.apache.paimon.globalindex.GlobalIndexBuilderUtils.createIndexWriter(
                        table, indexType, field, new Options());
        List<org.apache.paimon.globalindex.ResultEntry> entries;
        if (created instanceof org.apache.paimon.globalindex.GlobalIndexSingletonWriter) {
            // bitmap: every row's value in row-id order
            org.apache.paimon.globalindex.GlobalIndexSingletonWriter writer =
                    (org.apache.paimon.globalindex.GlobalIndexSingletonWriter) created;
            for (Object v : values.values()) {
                writer.write(v);
            }
            entries = writer.finish();
        } else {
            // btree: (value, row id) in value order (nulls first, then row ids ascending), as its builder sorts
            org.apache.paimon.globalindex.GlobalIndexParallelWriter writer =
                    (org.apache.paimon.globalindex.GlobalIndexParallelWriter) created;
            List<Map.Entry<Long, Object>> sorted = new ArrayList<>(values.entrySet());
            sorted.sort((a, b) -> {
                if (a.getValue() == null || b.getValue() == null) {
                    return a.getValue() == null && b.getValue() == null ? Long.compare(a.getKey(), b.getKey())
                            : a.getValue() == null ? -1 : 1;
                }
                @SuppressWarnings("unchecked")
                int c = ((Comparable<Object>) a.getValue()).compareTo(b.getValue());
                return c != 0 ? c : Long.compare(a.getKey(), b.getKey());
            });
            for (Map.Entry<Long, Object> e : sorted) {
                writer.write(e.getValue(), e.getKey());
            }
            entries = writer.finish();
        }
        List<org.apache.paimon.index.IndexFileMeta> metas =
                org.apache.paimon.globalindex.GlobalIndexBuilderUtils.toIndexFileMetas(
                        table.fileIO(), table.store().pathFactory().globalIndexFileFactory(), table.coreOptions(),
                        new org.apache.paimon.utils.Range(0, values.size() - 1), field.id(), indexType, entries);
        List<org.apache.paimon.table.sink.CommitMessage> messages = new ArrayList<>();
        messages.add(new org.apache.paimon.table.sink.CommitMessageImpl(BinaryRow.EMPTY_ROW, 0, null,
                org.apache.paimon.io.DataIncrement.indexIncrement(metas),
                org.apache.paimon.io.CompactIncrement.emptyIncrement()));
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
        ArrayNode names = NODES.arrayNode();
        metas.forEach(m -> names.add(m.fileName()));
        return names;
    }

    private static ArrayNode readSplits(TableRead read, List<Split> splits, RowType type, boolean withKind,
                                        ArrayNode into) throws Exception {
        List<InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < type.getFieldCount(); i++) {
            getters.add(InternalRow.createFieldGetter(type.getTypeAt(i), i));
        }
        try (RecordReaderIterator<InternalRow> it = new RecordReaderIterator<>(read.createReader(splits))) {
            while (it.hasNext()) {
                InternalRow row = it.next();
                ArrayNode values = NODES.arrayNode();
                if (withKind) {
                    values.add(row.getRowKind().shortString());
                }
                for (int i = 0; i < getters.size(); i++) {
                    values.add(toJson(getters.get(i).getFieldOrNull(row), type.getTypeAt(i)));
                }
                into.add(values);
            }
        }
        return into;
    }

    private static JsonNode toJson(Object value, DataType type) {
        if (value == null) {
            return NODES.nullNode();
        }
        if (value instanceof BinaryString) {
            return NODES.textNode(value.toString());
        }
        if (value instanceof Boolean) {
            return NODES.booleanNode((Boolean) value);
        }
        if (value instanceof Byte || value instanceof Short || value instanceof Integer || value instanceof Long) {
            return NODES.numberNode(((Number) value).longValue());
        }
        if (value instanceof Float || value instanceof Double) {
            return NODES.numberNode(((Number) value).doubleValue());
        }
        if (value instanceof Decimal) {
            return NODES.textNode(((Decimal) value).toBigDecimal().toPlainString());
        }
        if (value instanceof Timestamp) {
            return NODES.textNode(((Timestamp) value).toLocalDateTime().toString());
        }
        if (value instanceof byte[]) {
            return NODES.textNode(Base64.getEncoder().encodeToString((byte[]) value));
        }
        if (value instanceof InternalArray) {
            DataType element = ((org.apache.paimon.types.ArrayType) type).getElementType();
            InternalArray array = (InternalArray) value;
            InternalArray.ElementGetter getter = InternalArray.createElementGetter(element);
            ArrayNode list = NODES.arrayNode();
            for (int i = 0; i < array.size(); i++) {
                list.add(toJson(getter.getElementOrNull(array, i), element));
            }
            return list;
        }
        if (value instanceof InternalMap) {
            org.apache.paimon.types.MapType mapType = (org.apache.paimon.types.MapType) type;
            InternalMap map = (InternalMap) value;
            ArrayNode keys = (ArrayNode) toJson(map.keyArray(), new org.apache.paimon.types.ArrayType(mapType.getKeyType()));
            ArrayNode values = (ArrayNode) toJson(map.valueArray(),
                    new org.apache.paimon.types.ArrayType(mapType.getValueType()));
            ArrayNode pairs = NODES.arrayNode();
            for (int i = 0; i < keys.size(); i++) {
                pairs.add(NODES.arrayNode().add(keys.get(i)).add(values.get(i)));
            }
            return pairs;
        }
        if (value instanceof InternalRow) {
            RowType rowType = (RowType) type;
            ArrayNode fields = NODES.arrayNode();
            for (int i = 0; i < rowType.getFieldCount(); i++) {
                fields.add(toJson(InternalRow.createFieldGetter(rowType.getTypeAt(i), i).getFieldOrNull((InternalRow) value),
                        rowType.getTypeAt(i)));
            }
            return fields;
        }
        throw new IllegalArgumentException("no JSON form for a " + type + " value (" + value.getClass().getName() + ")");
    }

    /** A streaming scan, plan after plan, until it has caught up with the table's latest snapshot: the
     *  rows of each plan with their row kinds, one list a plan that had splits. */
    private JsonNode stream(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        ReadBuilder read = table.newReadBuilder();
        StreamTableScan scan = read.newStreamScan();
        TableRead reader = read.newRead().withIOManager(IO);
        Long latest = table.snapshotManager().latestSnapshotId();
        ArrayNode plans = NODES.arrayNode();
        for (int i = 0; i < r.path("max_plans").asInt(1000); i++) {
            List<Split> splits = scan.plan().splits();
            if (!splits.isEmpty()) {
                plans.add(readSplits(reader, splits, table.rowType(), true, NODES.arrayNode()));
            }
            Long next = scan.checkpoint();
            if (splits.isEmpty() && (latest == null || (next != null && next > latest))) {
                break;
            }
        }
        return plans;
    }

    // ------------------------------------------------------------------ writes
    private JsonNode write(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        RowType type = table.rowType();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        if (r.hasNonNull("overwrite")) {
            // INSERT OVERWRITE: of the partitions the map names (every one when it is empty), written with the
            // table's current bucket number (Paimon's rescale by overwrite)
            Map<String, String> partition = new HashMap<>();
            Iterator<Map.Entry<String, JsonNode>> fields = r.get("overwrite").fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> e = fields.next();
                partition.put(e.getKey(), e.getValue().asText());
            }
            builder = builder.withOverwrite(partition);
        }
        JsonNode kinds = r.get("kinds");
        try (BatchTableWrite write = builder.newWrite().withIOManager(IO); BatchTableCommit commit = builder.newCommit()) {
            // a dynamic-bucket table: each key's bucket from the hash index, as Paimon's writers assign them
            HashBucketAssigner assigner = null;
            RowKeyExtractor keys = null;
            if (table.bucketMode() == BucketMode.HASH_DYNAMIC) {
                CoreOptions options = CoreOptions.fromMap(table.options());
                Integer maxBuckets = options.dynamicBucketMaxBuckets();
                assigner = new HashBucketAssigner(table.snapshotManager(), UUID.randomUUID().toString(),
                        table.store().newIndexFileHandler(), 1, 1, 0, options.dynamicBucketTargetRowNum(),
                        maxBuckets == null ? -1 : maxBuckets);
                keys = table.createRowKeyExtractor();
            } else if (table.bucketMode() != BucketMode.HASH_FIXED && table.bucketMode() != BucketMode.BUCKET_UNAWARE) {
                throw new IllegalArgumentException("writing a table of bucket mode " + table.bucketMode()
                        + " is not supported here");
            }
            int n = 0;
            for (JsonNode values : r.get("rows")) {
                if (values.size() != type.getFieldCount()) {
                    throw new IllegalArgumentException("a row of " + values.size() + " values for " + type.getFieldCount()
                            + " columns: " + values);
                }
                GenericRow row = new GenericRow(type.getFieldCount());
                for (int i = 0; i < type.getFieldCount(); i++) {
                    row.setField(i, fromJson(values.get(i), type.getTypeAt(i)));
                }
                if (kinds != null && !kinds.isNull()) {
                    row.setRowKind(RowKind.fromShortString(kinds.get(n).asText()));
                }
                if (assigner != null) {
                    keys.setRecord(row);
                    write.write(row, assigner.assign(keys.partition(), keys.trimmedPrimaryKey().hashCode()));
                } else {
                    write.write(row);
                }
                n++;
            }
            commit.commit(write.prepareCommit());
        }
        return latestSnapshot(table);
    }

    /**
     * A data-evolution table's update of some columns, as Paimon's Spark MERGE INTO writes it: one file of the named
     * columns only, with a value for every row of the row-id range that starts at {@code first_row_id} (in row-id
     * order), given that first row id and committed as one APPEND snapshot. Unpartitioned tables only (the partition
     * of a file of some columns is not in its rows).
     */
    private JsonNode writeColumns(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        if (!table.partitionKeys().isEmpty()) {
            throw new IllegalArgumentException("write_columns writes unpartitioned tables only");
        }
        RowType type = table.rowType().project(strings(r.get("columns")));
        long firstRowId = r.get("first_row_id").asLong();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        List<CommitMessage> assigned = new ArrayList<>();
        try (BatchTableWrite write = builder.newWrite().withIOManager(IO).withWriteType(type);
             BatchTableCommit commit = builder.newCommit()) {
            for (JsonNode values : r.get("rows")) {
                GenericRow row = new GenericRow(type.getFieldCount());
                for (int i = 0; i < type.getFieldCount(); i++) {
                    row.setField(i, fromJson(values.get(i), type.getTypeAt(i)));
                }
                write.write(row);
            }
            for (CommitMessage m : write.prepareCommit()) {
                CommitMessageImpl message = (CommitMessageImpl) m;
                List<DataFileMeta> files = new ArrayList<>();
                for (DataFileMeta f : message.newFilesIncrement().newFiles()) {
                    files.add(f.assignFirstRowId(firstRowId));
                }
                assigned.add(new CommitMessageImpl(message.partition(), message.bucket(), message.totalBuckets(),
                        new DataIncrement(files, new ArrayList<>(), new ArrayList<>()), CompactIncrement.emptyIncrement()));
            }
            commit.commit(assigned);
        }
        return latestSnapshot(table);
    }

    private static JsonNode latestSnapshot(FileStoreTable table) {
        Long id = table.snapshotManager().latestSnapshotId();
        return id == null ? NODES.nullNode() : NODES.numberNode(id);
    }

    private static Object fromJson(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        DataTypeRoot root = type.getTypeRoot();
        switch (root) {
            case BOOLEAN: return v.asBoolean();
            case TINYINT: return (byte) v.asInt();
            case SMALLINT: return (short) v.asInt();
            case INTEGER: case DATE: return v.asInt();
            case BIGINT: return v.asLong();
            case FLOAT: return (float) v.asDouble();
            case DOUBLE: return v.asDouble();
            case CHAR: case VARCHAR: return BinaryString.fromString(v.asText());
            case DECIMAL: {
                org.apache.paimon.types.DecimalType d = (org.apache.paimon.types.DecimalType) type;
                return Decimal.fromBigDecimal(new BigDecimal(v.asText()), d.getPrecision(), d.getScale());
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE: case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return Timestamp.fromMicros(v.asLong());   // microseconds since the epoch
            case BINARY: case VARBINARY: return Base64.getDecoder().decode(v.asText());
            default: throw new IllegalArgumentException("writing a " + type + " value is not supported here");
        }
    }

    /** Compaction, full or not, of every bucket the latest snapshot has files in (a bucket-unaware
     *  append table by Paimon's own compaction coordinator), committed as one snapshot. */
    private JsonNode compact(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        boolean full = r.path("full").asBoolean(true);
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        List<CommitMessage> messages = new ArrayList<>();
        try (BatchTableWrite write = builder.newWrite().withIOManager(IO); BatchTableCommit commit = builder.newCommit()) {
            if (table.bucketMode() == BucketMode.BUCKET_UNAWARE) {
                BaseAppendFileStoreWrite appendWrite = (BaseAppendFileStoreWrite) ((TableWriteImpl<?>) write).getWrite();
                for (AppendCompactTask task : new AppendCompactCoordinator(table, false).run()) {
                    messages.add(task.doCompact(table, appendWrite));
                }
            } else {
                LinkedHashSet<Map.Entry<BinaryRow, Integer>> buckets = new LinkedHashSet<>();
                for (Split split : table.newScan().plan().splits()) {
                    DataSplit data = (DataSplit) split;
                    buckets.add(Map.entry(data.partition(), data.bucket()));
                }
                for (Map.Entry<BinaryRow, Integer> bucket : buckets) {
                    write.compact(bucket.getKey(), bucket.getValue(), full);
                }
                messages.addAll(write.prepareCommit());
            }
            commit.commit(messages);
        }
        return latestSnapshot(table);
    }

    // ------------------------------------------------------------------ maintenance
    private JsonNode rollback(JsonNode r) throws Exception {
        FileStoreTable table = fileTable(r);
        if (r.hasNonNull("tag")) {
            table.rollbackTo(r.get("tag").asText());
        } else {
            table.rollbackTo(r.get("snapshot").asLong());
        }
        return latestSnapshot(table);
    }

    private JsonNode expire(JsonNode r) throws Exception {
        ExpireConfig.Builder config = ExpireConfig.builder()
                .snapshotRetainMax(r.path("retain_max").asInt(Integer.MAX_VALUE))
                .snapshotRetainMin(r.path("retain_min").asInt(1))
                .snapshotTimeRetain(Duration.ofMillis(r.path("time_retained_ms").asLong(0)));
        return NODES.numberNode(fileTable(r).newExpireSnapshots().config(config.build()).expire());
    }

    private JsonNode removeOrphanFiles(JsonNode r) throws Exception {
        CleanOrphanFilesResult result = new LocalOrphanFilesClean(fileTable(r), r.get("older_than_ms").asLong(),
                r.path("dry_run").asBoolean(false)).clean();
        ArrayNode deleted = NODES.arrayNode();
        if (result.getDeletedFilesPath() != null) {
            result.getDeletedFilesPath().forEach(p -> deleted.add(p.toString()));
        }
        return deleted;
    }
}
