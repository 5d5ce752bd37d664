#include "sim/app/cli_help.hpp"

namespace dtsim::sim {

const char* general_usage() {
  return "usage: dtsim COMMAND [ARGUMENT]... [FLAG]...\n"
         "       dtsim COMMAND --help      the command's usage and every flag it takes\n"
         "       dtsim --version | --help\n"
         "\n"
         "commands:\n"
         "  run SCENARIO.ini        simulate the scenario and write metrics.csv and summary.json to DIR (default\n"
         "                          out/<run.name>)\n"
         "  check SCENARIO.ini      validate the scenario, its profiles and its dataset without running it\n"
         "  sweep SCENARIO.ini      run the scenario over every combination of the --vary values and seeds\n"
         "  collect DIR             rebuild a sweep's results.csv and summary.csv from its run folders\n"
         "  compare DIR...          print a sweep's groups, or run folders, side by side (mean ± std over seeds)\n"
         "  validate                check the article's claims over seeds and print PASS or FAIL per claim\n"
         "  keys                    list every scenario key with its type, unit, default and meaning\n"
         "  profiles [DIR]          list the GPU and fabric profiles in DIR (default: the profile folder)\n"
         "  collective              time one collective at doubling sizes, printed like nccl-tests\n"
         "  workload [NAME]         the workload catalog, or one workload's FLOPs and memory per GPU\n"
         "  calibrate --out DIR     measure this machine's backend and write it as a GPU profile\n"
         "\n"
         "A flag is written in full (--ranks, not --r). Scenario keys: dtsim keys, or docs/keys.md.\n"
         "\n"
         "exit status: 0 success (a run that diverged too), 2 bad input, 1 a run whose job failed or an internal\n"
         "error, 130 / 143 stopped by SIGINT / SIGTERM\n";
}

const char* command_help(const std::string& command) {
  if (command == "run")
    return "usage: dtsim run SCENARIO.ini [--out DIR] [--set section.key=value]... [--strict] [--quiet]\n"
           "\n"
           "Simulates the scenario and writes metrics.csv and summary.json (trace.json, links.csv and model.bin\n"
           "when the scenario asks for them) into DIR. They appear when the run ends and replace the previous\n"
           "run's; a run that is stopped or fails says so in summary.json and keeps its rows in\n"
           "metrics.partial.csv. Bad input is refused before anything is written.\n"
           "\n"
           "  --out DIR     the run's folder (default out/<run.name>); one live run per folder at a time\n"
           "  --set K=V     set a scenario key, over the file's value (repeatable)\n"
           "  --strict      a key that has no effect in this run is an error, found before anything runs\n"
           "  --quiet       print nothing but errors and warnings\n"
           "\n"
           "exit status: 0 completed or diverged, 2 bad input, 1 a run whose job failed or an internal error,\n"
           "130 / 143 stopped by SIGINT / SIGTERM\n";
  if (command == "check")
    return "usage: dtsim check SCENARIO.ini [--set section.key=value]... [--strict] [--quiet]\n"
           "\n"
           "Checks the scenario as 'dtsim run' would before it runs (its keys, profiles and dataset, the model\n"
           "built) and prints one line describing the run; runs and writes nothing.\n"
           "\n"
           "  --set K=V     set a scenario key, over the file's value (repeatable)\n"
           "  --strict      a key that has no effect in this run is an error, not a warning\n"
           "  --quiet       print nothing but errors and warnings\n"
           "\n"
           "exit status: 0 the scenario can run, 2 bad input\n";
  if (command == "keys")
    return "usage: dtsim keys [--format text|markdown]\n"
           "\n"
           "Lists every scenario key with its type, unit, default, range and meaning.\n"
           "\n"
           "  --format F    text (default) | markdown (the page docs/keys.md)\n";
  if (command == "profiles")
    return "usage: dtsim profiles [DIR]\n"
           "\n"
           "Lists the GPU and fabric profiles in DIR/gpu/ and DIR/fabric/ (default: the profile folder,\n"
           "$DTSIM_PROFILE_DIR or the source tree's network_profiles/) with their main numbers; a profile that\n"
           "does not load is bad input, named with its file and line. Takes no flag.\n";
  return nullptr;
}

}  // namespace dtsim::sim
