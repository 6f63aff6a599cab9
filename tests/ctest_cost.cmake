# Included by ctest after the gtest_discover_tests lists (tests/CMakeLists.txt): the longest
# tests get a COST, so that a run without Testing/Temporary/CTestCostData.txt (every CI run: a
# fresh clone) starts them first instead of in declaration order, where one of them could start
# last and run alone on one core while the other core idles. The figures are their seconds
# under ASan (scripts/test asan, 2 cores, ctest -j4); only the order matters. A name that no
# longer exists is ignored.
set_tests_properties(
  CrashSafety.SigkillAtEveryIoOperationOfThePlainRenamePublishKeepsEveryListedRecord
  CrashSafety.SigkillAtEveryIoOperationLeavesAVerifiedMirrorThatTheNextRunCompletes
  PROPERTIES COST 110)
# gtest_discover_tests names a value-parameterised test with its parameter as PrintTo prints it
# (test_s3_sync.cpp): the whole name.
set_tests_properties(
  "Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing0of4  # GetParam() = replacing, shard 0 of 4"
  "Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing1of4  # GetParam() = replacing, shard 1 of 4"
  "Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing2of4  # GetParam() = replacing, shard 2 of 4"
  "Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing3of4  # GetParam() = replacing, shard 3 of 4"
  PROPERTIES COST 30)

set_tests_properties(
  UpstreamLayout.KilledAtEveryStepOfTheCollectionNothingListedIsLostAndTheNextRunFinishes
  PROPERTIES COST 35)
