// The store's schema, for the code in src/store/ only: the tables' column lists (merge.cpp copies
// rows between stores without restating them), the SQL that reads, finds and writes a point, and
// what opening a file checks and upgrades (store.cpp). schema.cpp defines the tables.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "core/records.hpp"
#include "store/sqlite.hpp"

namespace shapescope::schema {

// The schema version this build writes and reads.
int version();
// The columns that make a point distinct (the points table's UNIQUE constraint).
std::vector<std::string> key_columns();
// Every column of the points table except its id, in table order.
std::vector<std::string> point_columns();

// Every column of the points table, in table order, as a SELECT list for a table of `version`
// (a column the table predates reads as its legacy value).
std::string select_list(int version);
// "gpu_uuid = ? AND ... AND clock_state = ?" over the key columns of a table of `version`.
std::string key_where_clause(int version);
// Binds the key columns, in key_columns() order, starting at parameter `first`; returns the next one.
int bind_key(sql::Statement& stmt, int first, const DeviceContext& device, const PointKey& key);
// The columns a point's INSERT binds, in its order: the device columns outside the key (gpu_name,
// sm_count, cc), the key (bind_key()), then every column after the key, as in the table.
std::vector<std::string> insert_columns();
// The kernels table's columns, in the order a kernel is written and read.
inline constexpr const char* kKernelColumns =
    "point_id, seq, name, grid_x, grid_y, grid_z, block_x, block_y, block_z, "
    "cluster_x, cluster_y, cluster_z, registers, static_smem, dynamic_smem, duration_us";

// Opening a file: the names of its tables (none for a new or empty file); a file with tables must
// be a shapescope store of a schema version this build reads (returns it; fails otherwise).
std::vector<std::string> table_names(sqlite3* db, const std::string& path);
int check_schema_version(sqlite3* db, const std::string& path, const std::vector<std::string>& tables);
// An older schema -> this one inside the writing connection's open transaction: the points copied into a table of
// this schema; returns how many.
int64_t upgrade_points_table(sqlite3* db, const std::string& path, int from_version,
                             const std::vector<std::string>& tables);
// The tables that do not exist yet, and the meta rows that name the file a shapescope store.
void create_schema(sqlite3* db, const std::string& path);
// quick_check: a damaged file fails here in one line rather than half way through a read.
void check_pages(sqlite3* db, const std::string& path);

}  // namespace shapescope::schema
