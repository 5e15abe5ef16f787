// Keeps the library non-empty until the first study lands; delete when another .cpp exists.
namespace servesim::planning {
int planning_library_placeholder() { return 0; }
}  // namespace servesim::planning
